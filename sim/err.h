/* sim/err.h - status codes shared by every module.
 *
 * Convention: functions return int, 0 on success, a negative SIM_E* on failure; results go
 * through out-parameters. One X-macro table generates the enum and sim_strerror(). Bad *input* is reported through diag (sim/diag.h) and maps to SIM_EINPUT;
 * environment failures (file missing, disk full) map to SIM_EIO / SIM_ENOENT.
 * Ownership: the strings returned are static storage. No units.
 */
#ifndef SIMPROJ_SIM_ERR_H
#define SIMPROJ_SIM_ERR_H

#define SIM_ERRNO_MAP(X)                                        \
    X(EINPUT, -2, "invalid input")                              \
    X(EIO, -3, "input/output error")                            \
    X(ENOENT, -4, "no such file or directory")                  \
    X(ENOMEM, -5, "out of memory")                              \
    X(ERANGE, -6, "value out of range")                         \
    X(ENOTFOUND, -7, "no such item")                            \
    X(ENOCONV, -9, "did not converge")

typedef enum sim_err {
    SIM_OK = 0,
#define SIM_ERR_ENUM(name, val, msg) SIM_##name = (val),
    SIM_ERRNO_MAP(SIM_ERR_ENUM)
#undef SIM_ERR_ENUM
} sim_err;

/* Human-readable message for a status code; never NULL (static storage). */
const char *sim_strerror(int err);

#endif
