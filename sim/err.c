#include "sim/err.h"

const char *sim_strerror(int err)
{
    switch (err) {
    case SIM_OK: return "success";
#define SIM_ERR_MSG(name, val, msg) case SIM_##name: return msg;
    SIM_ERRNO_MAP(SIM_ERR_MSG)
#undef SIM_ERR_MSG
    default: return "unknown error";
    }
}

