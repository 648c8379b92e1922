/* experiments/embedded.c - .incbin of the project's data files (see embedded.h).
 * The paths are relative to the repository root, where make runs the compiler. */
#include "experiments/embedded.h"

#include <string.h>

/* EMBED(sym, "path") defines sym_start/sym_end around the file's bytes in .rodata. */
#define EMBED(sym, path)                                                                      \
    __asm__(".section .rodata\n.balign 16\n.global " #sym "_start\n" #sym "_start:\n"       \
            ".incbin \"" path "\"\n.global " #sym "_end\n" #sym "_end:\n.byte 0\n"          \
            ".previous\n");                                                                 \
    extern const unsigned char sym##_start[], sym##_end[];

EMBED(emb_gpus, "model/hw/gpus.yaml")
EMBED(emb_physics, "model/physics/physics.yaml")
EMBED(emb_comm, "model/physics/comm.yaml")
EMBED(emb_priors, "workloads/priors.yaml")
EMBED(emb_wl_bert_base_train, "workloads/library/bert-base-train.yaml")
EMBED(emb_wl_cern_finetune, "workloads/library/cern-finetune.yaml")
EMBED(emb_wl_resnet50_train, "workloads/library/resnet50-train.yaml")
EMBED(emb_wl_simpletrack, "workloads/library/simpletrack.yaml")
EMBED(emb_wl_vit_b16_infer, "workloads/library/vit-b16-infer.yaml")
EMBED(emb_wl_yolos_small_infer, "workloads/library/yolos-small-infer.yaml")

typedef struct embedded_file {
    const char *path;
    const unsigned char *start, *end;
} embedded_file;

#define ENTRY(sym, path) {path, sym##_start, sym##_end}

static const embedded_file files[] = {
    ENTRY(emb_gpus, "model/hw/gpus.yaml"),
    ENTRY(emb_physics, "model/physics/physics.yaml"),
    ENTRY(emb_comm, "model/physics/comm.yaml"),
    ENTRY(emb_priors, "workloads/priors.yaml"),
    ENTRY(emb_wl_bert_base_train, "workloads/library/bert-base-train.yaml"),
    ENTRY(emb_wl_cern_finetune, "workloads/library/cern-finetune.yaml"),
    ENTRY(emb_wl_resnet50_train, "workloads/library/resnet50-train.yaml"),
    ENTRY(emb_wl_simpletrack, "workloads/library/simpletrack.yaml"),
    ENTRY(emb_wl_vit_b16_infer, "workloads/library/vit-b16-infer.yaml"),
    ENTRY(emb_wl_yolos_small_infer, "workloads/library/yolos-small-infer.yaml"),
};

bool embedded_get(const char *path, const unsigned char **data, size_t *len)
{
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++) {
        if (!strcmp(files[i].path, path)) {
            *data = files[i].start;
            *len = (size_t)(files[i].end - files[i].start);
            return true;
        }
    }
    return false;
}

const char *embedded_path(size_t i)
{
    return i < sizeof files / sizeof files[0] ? files[i].path : NULL;
}
