/* model/hw/catalog.c - lookups in the GPU catalog (see catalog.h). */
#include "model/hw/catalog.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static const char *const format_names[GPU_FMT_COUNT] = {
    [GPU_FMT_FP64] = "fp64",
    [GPU_FMT_FP32] = "fp32",
    [GPU_FMT_FP16] = "fp16",
    [GPU_FMT_FP64_TENSOR] = "fp64_tensor",
    [GPU_FMT_TF32_TENSOR] = "tf32_tensor",
    [GPU_FMT_FP16_TENSOR] = "fp16_tensor",
    [GPU_FMT_BF16_TENSOR] = "bf16_tensor",
    [GPU_FMT_FP8_TENSOR] = "fp8_tensor",
    [GPU_FMT_INT8_TENSOR] = "int8_tensor",
};

gpu_format gpu_format_from_name(const char *name)
{
    for (int f = 0; f < GPU_FMT_COUNT; f++) {
        if (name && !strcmp(format_names[f], name)) {
            return (gpu_format)f;
        }
    }
    return GPU_FMT_COUNT;
}

static bool name_matches(const gpu_type *g, const char *name, int (*cmp)(const char *, const char *))
{
    if (g->name && !cmp(g->name, name)) {
        return true;
    }
    for (int i = 0; i < g->n_aliases; i++) {
        if (g->aliases[i] && !cmp(g->aliases[i], name)) {
            return true;
        }
    }
    return false;
}

const gpu_type *gpu_catalog_find(const gpu_catalog *c, const char *name)
{
    if (!c || !name) {
        return NULL;
    }
    for (size_t i = 0; i < c->n_gpus; i++) {
        if (name_matches(&c->gpus[i], name, strcmp)) {
            return &c->gpus[i];
        }
    }
    for (size_t i = 0; i < c->n_gpus; i++) {
        if (name_matches(&c->gpus[i], name, strcasecmp)) {
            return &c->gpus[i];
        }
    }
    return NULL;
}

int gpu_profile_index(const gpu_type *g, const char *name)
{
    if (!g || !name) {
        return -1;
    }
    for (int i = 0; i < g->n_profiles; i++) {
        if (g->profiles[i].name && !strcmp(g->profiles[i].name, name)) {
            return i;
        }
    }
    return -1;
}

const mig_profile *gpu_find_profile(const gpu_type *g, const char *name)
{
    int i = gpu_profile_index(g, name);
    return i < 0 ? NULL : &g->profiles[i];
}

const char *gpu_catalog_names(const gpu_catalog *c, char *buf, size_t n)
{
    size_t used = 0;
    if (n == 0) {
        return buf;
    }
    buf[0] = '\0';
    for (size_t i = 0; c && i < c->n_gpus && used + 1 < n; i++) {
        int k = snprintf(buf + used, n - used, "%s%s", i ? ", " : "", c->gpus[i].name);
        if (k < 0) {
            break;
        }
        used += (size_t)k;
    }
    return buf;
}

void gpu_catalog_with(const gpu_catalog *c, const gpu_type *types, size_t n, arena *a,
                      gpu_catalog *out)
{
    *out = *c;
    out->gpus = arena_calloc(a, c->n_gpus ? c->n_gpus : 1, sizeof *out->gpus);
    for (size_t i = 0; i < c->n_gpus; i++) {
        out->gpus[i] = c->gpus[i];
        for (size_t k = 0; k < n; k++) {
            if (types[k].name && c->gpus[i].name && !strcmp(types[k].name, c->gpus[i].name)) {
                out->gpus[i] = types[k];
            }
        }
    }
}
