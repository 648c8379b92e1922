/* experiments/telemetry.c - dcgm-exporter scrapes, Prometheus answers and nvidia-smi logs reduced
 * to an observation's measurements (see telemetry.h). */
#include "experiments/telemetry.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "experiments/fileio.h"
#include "experiments/jsonrd.h"
#include "sim/err.h"
#include "workloads/csvin.h"

static const char *const format_names[] = {"auto", "dcgm", "prometheus-json", "nvidia-smi"};

int tel_format_find(const char *name)
{
    for (int i = 0; i < 4; i++) {
        if (!strcmp(format_names[i], name)) {
            return i;
        }
    }
    return -1;
}

/* ------------------------------------------------------------------ accumulation */

enum { M_GPU_UTIL, M_GR, M_SM, M_DRAM, M_POWER, M_FB, M_N };

typedef struct acc {
    const tel_query *q;
    double sum[M_N];
    size_t n[M_N];
    double fb_max;
    double first_s, last_s;
    char model[64];
    bool smi; /* utilisation from nvidia-smi */
} acc;

/* Which figure a DCGM metric name feeds, or -1. */
static int metric_of(const char *name)
{
    static const struct {
        const char *name;
        int m;
    } map[] = {{"DCGM_FI_DEV_GPU_UTIL", M_GPU_UTIL}, {"DCGM_FI_PROF_GR_ENGINE_ACTIVE", M_GR},
               {"DCGM_FI_PROF_SM_ACTIVE", M_SM},     {"DCGM_FI_PROF_DRAM_ACTIVE", M_DRAM},
               {"DCGM_FI_DEV_POWER_USAGE", M_POWER}, {"DCGM_FI_DEV_FB_USED", M_FB}};
    for (size_t i = 0; i < sizeof map / sizeof map[0]; i++) {
        if (!strcmp(map[i].name, name)) {
            return map[i].m;
        }
    }
    return -1;
}

/* Whether a label value is the integer k ("0", "3"). */
static bool label_is(const char *v, int k)
{
    if (!v || !*v) {
        return false;
    }
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    return !*end && !errno && x == k;
}

/* One sample of figure m for GPU `gpu` (instance: GPU_I_ID or NULL) at time t (NaN: unknown). */
static void add(acc *a, int m, const char *gpu, const char *instance, const char *model, double v,
                double t)
{
    const tel_query *q = a->q;
    if (m < 0 || !label_is(gpu, q->gpu) || !isfinite(v)) {
        return;
    }
    if (q->instance >= 0 ? !label_is(instance, q->instance) : (instance && *instance)) {
        return; /* another instance, or an instance's sample when the whole GPU is asked for */
    }
    if (!isnan(t) && (t < q->from_s || t > q->to_s)) {
        return;
    }
    if (m == M_GPU_UTIL) {
        v /= 100; /* DCGM_FI_DEV_GPU_UTIL and utilization.gpu are percentages */
    }
    if (m == M_FB) {
        a->fb_max = a->n[m] == 0 || v > a->fb_max ? v : a->fb_max;
    }
    a->sum[m] += v;
    a->n[m]++;
    if (!isnan(t)) {
        a->first_s = isnan(a->first_s) || t < a->first_s ? t : a->first_s;
        a->last_s = isnan(a->last_s) || t > a->last_s ? t : a->last_s;
    }
    if (model && *model && !a->model[0]) {
        snprintf(a->model, sizeof a->model, "%s", model);
    }
}

static double mean(const acc *a, int m)
{
    return a->n[m] ? a->sum[m] / (double)a->n[m] : (double)NAN;
}

/* The result, or SIM_EINPUT (reported at the file) when no utilisation sample was found. */
static int finish(acc *a, const char *name, diag *d, tel_result *out)
{
    *out = (tel_result){0};
    bool mig = a->q->instance >= 0;
    int um = !mig && a->n[M_GPU_UTIL] ? M_GPU_UTIL : M_GR;
    out->n_util = a->n[um];
    out->gpu_util = mean(a, um);
    out->util_source = um == M_GR ? "DCGM_FI_PROF_GR_ENGINE_ACTIVE"
                       : a->smi   ? "utilization.gpu"
                                  : "DCGM_FI_DEV_GPU_UTIL";
    out->gr_engine_active = mean(a, M_GR);
    out->sm_active = mean(a, M_SM);
    out->dram_active = mean(a, M_DRAM);
    out->power_w = mean(a, M_POWER);
    out->fb_used_bytes = a->n[M_FB] ? a->fb_max * 1048576.0 : (double)NAN;
    out->first_s = a->first_s;
    out->last_s = a->last_s;
    snprintf(out->model, sizeof out->model, "%s", a->model);
    if (out->n_util == 0) {
        char what[64];
        if (mig) {
            snprintf(what, sizeof what, "GPU %d instance %d", a->q->gpu, a->q->instance);
        } else {
            snprintf(what, sizeof what, "GPU %d", a->q->gpu);
        }
        diag_error(d, (src_loc){name, 0, 0}, NULL,
                   "no utilisation sample of %s in the window; expected %s for it, got none", what,
                   mig ? "DCGM_FI_PROF_GR_ENGINE_ACTIVE with its GPU_I_ID"
                       : "DCGM_FI_DEV_GPU_UTIL, DCGM_FI_PROF_GR_ENGINE_ACTIVE or utilization.gpu");
        return SIM_EINPUT;
    }
    return 0;
}

/* ------------------------------------------------------------------ Prometheus text */

typedef struct textrd {
    const char *name, *buf;
    size_t len;
    diag *d;
    int errors;
} textrd;

static void text_error(textrd *r, size_t off, const char *what, const char *line, size_t line_len)
{
    diag_error(r->d, diag_loc_from_offset(r->name, r->buf, r->len, off), NULL,
               "expected %s, got '%.*s'", what, (int)(line_len > 60 ? 60 : line_len), line);
    r->errors++;
}

/* One sample line at buf[off..off+n). */
static void prom_line(textrd *r, acc *a, size_t off, size_t n)
{
    const char *s = r->buf + off, *e = s + n, *p = s;
    char name[128], gpu[128] = "", inst[128] = "", model[128] = "";
    size_t k = 0;
    while (p < e && (isalnum((unsigned char)*p) || *p == '_' || *p == ':') && k < sizeof name - 1) {
        name[k++] = *p++;
    }
    name[k] = 0;
    if (k == 0 || isdigit((unsigned char)name[0])) {
        text_error(r, off, "a sample: NAME{label=\"value\",...} VALUE [TIMESTAMP]", s, n);
        return;
    }
    if (p < e && *p == '{') {
        p++;
        for (;;) {
            while (p < e && (*p == ' ' || *p == ',')) {
                p++;
            }
            if (p < e && *p == '}') {
                p++;
                break;
            }
            const char *ln = p;
            while (p < e && (isalnum((unsigned char)*p) || *p == '_')) {
                p++;
            }
            size_t lnn = (size_t)(p - ln);
            if (lnn == 0 || p + 1 >= e || p[0] != '=' || p[1] != '"') {
                text_error(r, (size_t)(p - r->buf), "a label: name=\"value\"", s, n);
                return;
            }
            p += 2;
            char val[128];
            size_t vn = 0;
            while (p < e && *p != '"') {
                if (*p == '\\' && p + 1 < e) {
                    p++;
                }
                if (vn < sizeof val - 1) {
                    val[vn++] = *p;
                }
                p++;
            }
            val[vn] = 0;
            if (p >= e) {
                text_error(r, (size_t)(p - r->buf), "a closing '\"' of the label value", s, n);
                return;
            }
            p++;
            if (lnn == 3 && !strncmp(ln, "gpu", 3)) {
                snprintf(gpu, sizeof gpu, "%s", val);
            } else if (lnn == 8 && !strncmp(ln, "GPU_I_ID", 8)) {
                snprintf(inst, sizeof inst, "%s", val);
            } else if (lnn == 9 && !strncmp(ln, "modelName", 9)) {
                snprintf(model, sizeof model, "%s", val);
            }
        }
    }
    while (p < e && (*p == ' ' || *p == '\t')) {
        p++;
    }
    char num[64];
    size_t nn = 0;
    while (p < e && !isspace((unsigned char)*p) && nn < sizeof num - 1) {
        num[nn++] = *p++;
    }
    num[nn] = 0;
    char *end;
    errno = 0;
    double v = strtod(num, &end);
    if (nn == 0 || *end || errno == ERANGE) {
        text_error(r, (size_t)(p - nn - r->buf),
                   "a sample value (a number) after the name and labels", s, n);
        return;
    }
    while (p < e && (*p == ' ' || *p == '\t')) {
        p++;
    }
    double t = NAN;
    if (p < e) {
        nn = 0;
        while (p < e && !isspace((unsigned char)*p) && nn < sizeof num - 1) {
            num[nn++] = *p++;
        }
        num[nn] = 0;
        errno = 0;
        t = strtod(num, &end);
        if (*end || errno || !isfinite(t) || t < 0) {
            text_error(r, (size_t)(p - nn - r->buf),
                       "a timestamp (milliseconds in Prometheus text, seconds in OpenMetrics)", s,
                       n);
            return;
        }
        t = t > 1e11 ? t / 1000 : t; /* Prometheus text writes ms; OpenMetrics seconds */
    }
    add(a, metric_of(name), gpu, inst, model, v, t);
}

static int read_prom(const char *name, const char *buf, size_t len, acc *a, diag *d)
{
    textrd r = {name, buf, len, d, 0};
    size_t off = 0;
    while (off < len) {
        size_t n = 0;
        while (off + n < len && buf[off + n] != '\n') {
            n++;
        }
        size_t m = n;
        while (m > 0 && (buf[off + m - 1] == '\r' || buf[off + m - 1] == ' ')) {
            m--;
        }
        size_t lead = 0;
        while (lead < m && (buf[off + lead] == ' ' || buf[off + lead] == '\t')) {
            lead++;
        }
        if (memchr(buf + off, 0, n)) {
            text_error(&r, off, "text (a NUL byte is not)", "\\0", 2);
        } else if (m > lead && buf[off + lead] != '#') {
            prom_line(&r, a, off + lead, m - lead);
        }
        if (r.errors >= DIAG_MAX_ERRORS) {
            break;
        }
        off += n + 1;
    }
    return r.errors ? SIM_EINPUT : 0;
}

/* ------------------------------------------------------------------ Prometheus JSON */

static const char *label(const cJSON *metric, const char *key)
{
    const cJSON *v = jsonrd_get(metric, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* One [time, "value"] pair at path p. */
static void json_pair(jsonrd *r, acc *a, const cJSON *pair, const char *p, int m,
                      const cJSON *metric)
{
    const cJSON *t = cJSON_GetArrayItem(pair, 0), *v = cJSON_GetArrayItem(pair, 1);
    char *end = NULL;
    double x = cJSON_IsString(v) ? strtod(v->valuestring, &end) : 0;
    if (!cJSON_IsArray(pair) || cJSON_GetArraySize(pair) != 2 || !cJSON_IsNumber(t) ||
        !cJSON_IsString(v) || end == v->valuestring || *end) {
        jsonrd_bad(r, p, "a pair [unix_seconds, \"value\"]", pair, NULL);
        return;
    }
    add(a, m, label(metric, "gpu"), label(metric, "GPU_I_ID"), label(metric, "modelName"), x,
        t->valuedouble);
}

static int read_json(const char *name, const char *buf, size_t len, acc *a, diag *d)
{
    jsonrd r = {.file = name, .d = d, .text = buf, .len = len};
    cJSON *root = jsonrd_parse(&r);
    const cJSON *data = jsonrd_get(root, "data");
    const cJSON *status = jsonrd_get(root, "status"), *type = jsonrd_get(data, "resultType");
    const cJSON *result = jsonrd_get(data, "result");
    if (root && (!cJSON_IsString(status) || strcmp(status->valuestring, "success"))) {
        jsonrd_bad(&r, "status", "\"success\" (a Prometheus query's answer)", status, root);
    } else if (root && (!cJSON_IsString(type) || (strcmp(type->valuestring, "matrix") &&
                                                  strcmp(type->valuestring, "vector")))) {
        jsonrd_bad(&r, "data.resultType", "\"matrix\" (query_range) or \"vector\" (query)", type,
                   data ? data : root);
    } else if (root && !cJSON_IsArray(result)) {
        jsonrd_bad(&r, "data.result", "an array of series", result, data);
    }
    int i = 0;
    for (const cJSON *s = r.errors ? NULL : result->child; s; s = s->next, i++) {
        char p[96];
        const cJSON *metric = jsonrd_get(s, "metric");
        const char *mname = label(metric, "__name__");
        if (!mname) {
            snprintf(p, sizeof p, "data.result[%d].metric.__name__", i);
            jsonrd_bad(&r, p, "the metric's name, like DCGM_FI_DEV_GPU_UTIL",
                       jsonrd_get(metric, "__name__"), metric ? metric : s);
            continue;
        }
        int m = metric_of(mname);
        const cJSON *values = jsonrd_get(s, "values"), *value = jsonrd_get(s, "value");
        if (value) {
            snprintf(p, sizeof p, "data.result[%d].value", i);
            json_pair(&r, a, value, p, m, metric);
        } else if (cJSON_IsArray(values)) {
            int k = 0;
            for (const cJSON *pair = values->child; pair; pair = pair->next, k++) {
                snprintf(p, sizeof p, "data.result[%d].values[%d]", i, k);
                json_pair(&r, a, pair, p, m, metric);
            }
        } else {
            snprintf(p, sizeof p, "data.result[%d].values", i);
            jsonrd_bad(&r, p, "an array of [unix_seconds, \"value\"] pairs", values, s);
        }
    }
    int errors = r.errors;
    cJSON_Delete(root);
    jsonrd_fini(&r);
    return errors ? SIM_EINPUT : 0;
}

/* ------------------------------------------------------------------ nvidia-smi CSV */

/* nvidia-smi's column names, the unit of each (NULL: none) and the figure it feeds. */
static const struct {
    const char *name, *unit;
    int m;
} smi_cols[] = {{"utilization.gpu", "%", M_GPU_UTIL},
                {"memory.used", "MiB", M_FB},
                {"power.draw", "W", M_POWER}};

/* "2024/05/01 10:00:00.123" (nvidia-smi's timestamp) -> unix seconds, or NaN. */
static double smi_time(const char *s)
{
    int y, mo, dd, h, mi;
    double sec;
    char tail;
    if (sscanf(s, "%4d/%2d/%2d %2d:%2d:%lf%c", &y, &mo, &dd, &h, &mi, &sec, &tail) != 6 || mo < 1 ||
        mo > 12 || dd < 1 || dd > 31 || h > 23 || mi > 59 || sec < 0 || sec >= 61) {
        return NAN;
    }
    return csvin_epoch_s(y, mo, dd, h, mi, sec);
}

static int read_smi(const char *name, const char *buf, size_t len, acc *a, diag *d)
{
    FILE *f = fmemopen((void *)buf, len ? len : 1, "r");
    if (!f) {
        return SIM_EIO;
    }
    csvin *r;
    int rc = len ? csvin_open(f, name, true, d, &r) : SIM_EINPUT;
    if (rc) {
        if (!len) {
            diag_error(d, (src_loc){name, 1, 1}, NULL,
                       "empty file; expected nvidia-smi --query-gpu CSV, got nothing");
        }
        fclose(f);
        return SIM_EINPUT;
    }
    int col_t = -1, col_i = -1, col[3] = {-1, -1, -1}, col_name = -1;
    const char *head_unit[3] = {NULL, NULL, NULL};
    for (size_t c = 0; c < csvin_n_columns(r); c++) {
        const char *h = csvin_column_name(r, c);
        size_t hn = strcspn(h, " [");
        const char *br = strchr(h, '[');
        if (hn == 9 && !strncmp(h, "timestamp", 9)) {
            col_t = (int)c;
        } else if (hn == 5 && !strncmp(h, "index", 5)) {
            col_i = (int)c;
        } else if (hn == 4 && !strncmp(h, "name", 4)) {
            col_name = (int)c;
        }
        for (int k = 0; k < 3; k++) {
            if (strlen(smi_cols[k].name) == hn && !strncmp(h, smi_cols[k].name, hn)) {
                col[k] = (int)c;
                head_unit[k] = br ? br + 1 : NULL;
            }
        }
    }
    const char *need[3] = {col_t < 0 ? "timestamp" : NULL, col_i < 0 ? "index" : NULL,
                           col[0] < 0 ? "utilization.gpu" : NULL};
    for (int k = 0; k < 3; k++) {
        if (need[k]) {
            diag_error(d, (src_loc){name, 1, 1}, need[k],
                       "missing column; expected nvidia-smi --query-gpu=timestamp,index,"
                       "utilization.gpu[,memory.used,power.draw] --format=csv, got no '%s'",
                       need[k]);
            rc = SIM_EINPUT;
        }
    }
    int k;
    while (rc == 0 && (k = csvin_next(r)) != 0) {
        if (k < 0) {
            rc = SIM_EINPUT;
            continue;
        }
        double t = smi_time(csvin_field(r, (size_t)col_t));
        if (isnan(t)) {
            csvin_error(r, (size_t)col_t,
                        "expected nvidia-smi's time like 2024/05/01 "
                        "10:00:00.123, got '%s'",
                        csvin_field(r, (size_t)col_t));
            rc = SIM_EINPUT;
            continue;
        }
        uint64_t idx;
        if (!csvin_u64(r, (size_t)col_i, 0, 1024, &idx)) {
            rc = SIM_EINPUT;
            continue;
        }
        char gpu[24];
        snprintf(gpu, sizeof gpu, "%llu", (unsigned long long)idx);
        for (int c = 0; c < 3; c++) {
            if (col[c] < 0) {
                continue;
            }
            const char *v = csvin_field(r, (size_t)col[c]);
            if (!strcmp(v, "[N/A]") || !strcmp(v, "[Not Supported]")) {
                continue; /* nvidia-smi's own word for a value it does not have */
            }
            char *end;
            errno = 0;
            double x = strtod(v, &end);
            while (*end == ' ') {
                end++;
            }
            const char *want = smi_cols[c].unit;
            bool head_ok = head_unit[c] && !strncmp(head_unit[c], want, strlen(want)) &&
                           head_unit[c][strlen(want)] == ']';
            bool unit_ok = *end ? !strcmp(end, want) && (!head_unit[c] || head_ok) : head_ok;
            if (end == v || errno || !isfinite(x) || !unit_ok) {
                csvin_error(r, (size_t)col[c],
                            "expected a number in %s (the unit in the header, [%s], or after "
                            "the value), got '%s'",
                            want, want, v);
                rc = SIM_EINPUT;
                break;
            }
            a->smi = true;
            add(a, smi_cols[c].m, gpu, NULL,
                col_name >= 0 ? csvin_field(r, (size_t)col_name) : NULL, x, t);
        }
    }
    csvin_close(r);
    fclose(f);
    return rc || diag_error_count(d) ? SIM_EINPUT : 0;
}

/* ------------------------------------------------------------------ entry points */

static tel_format detect(const char *buf, size_t len)
{
    size_t i = 0;
    while (i < len && isspace((unsigned char)buf[i])) {
        i++;
    }
    if (i < len && buf[i] == '{') {
        return TEL_PROM_JSON;
    }
    size_t n = 0;
    while (i + n < len && buf[i + n] != '\n') {
        n++;
    }
    for (size_t k = 0; k + 15 <= n; k++) {
        if (!memcmp(buf + i + k, "utilization.gpu", 15)) {
            return TEL_SMI_CSV;
        }
    }
    return TEL_PROM;
}

int tel_load_buffer(const char *name, const char *buf, size_t len, const tel_query *q, diag *d,
                    tel_result *out)
{
    acc a = {.q = q, .first_s = NAN, .last_s = NAN};
    tel_format f = q->format == TEL_AUTO ? detect(buf, len) : q->format;
    int rc = f == TEL_PROM_JSON ? read_json(name, buf, len, &a, d)
             : f == TEL_SMI_CSV ? read_smi(name, buf, len, &a, d)
                                : read_prom(name, buf, len, &a, d);
    if (rc == 0) {
        rc = finish(&a, name, d, out);
    }
    return rc;
}

int tel_load_file(const char *path, const tel_query *q, diag *d, tel_result *out)
{
    char *buf;
    size_t len;
    int rc = fileio_read_all(path, FILEIO_MAX_BYTES, &buf, &len);
    if (rc) {
        return rc;
    }
    rc = tel_load_buffer(path, buf, len, q, d, out);
    free(buf);
    return rc;
}
