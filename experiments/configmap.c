/* experiments/configmap.c - unwrap a Kubernetes ConfigMap around a config (see configmap.h). */
#include "experiments/configmap.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/fileio.h"
#include "sim/err.h"
#include "sim/xalloc.h"

static const char *const configmap_keys[] = {"apiVersion", "kind",      "metadata",
                                             "data",       "binaryData", "immutable", NULL};

/* Columns of indentation of the first non-blank line after byte `from` (the line of a block
 * scalar's indicator): the indentation libyaml removed from every line of the block. */
static int block_indent(const char *buf, size_t len, size_t from)
{
    size_t i = from;
    while (i < len && buf[i] != '\n') {
        i++;
    }
    while (i < len) {
        int n = 0;
        for (i++; i < len && buf[i] == ' '; i++) {
            n++;
        }
        if (i < len && buf[i] != '\n' && buf[i] != '\r') {
            return n;
        }
    }
    return 0;
}

/* Check a ConfigMap's shape; returns its one data value (a literal block scalar) or NULL after
 * reporting why to d. */
static yaml_node_t *config_value(yamlx_doc *doc, yaml_node_t *root, diag *d)
{
    bool ok = true;
    for (yaml_node_pair_t *p = root->data.mapping.pairs.start; p < root->data.mapping.pairs.top;
         p++) {
        yaml_node_t *k = yamlx_node(doc, p->key);
        const char *key = yamlx_scalar(k);
        bool known = false;
        for (size_t i = 0; key && configmap_keys[i]; i++) {
            known |= !strcmp(key, configmap_keys[i]);
        }
        if (!known) {
            diag_error(d, yamlx_loc(doc, k), key ? key : "(key)",
                       "unknown key of a ConfigMap; expected one of [apiVersion, kind, metadata, "
                       "data, binaryData, immutable], got '%s'",
                       key ? key : yamlx_kind(k));
            ok = false;
        }
    }
    yaml_node_t *api = yamlx_map_get(doc, root, "apiVersion");
    const char *v = yamlx_scalar(api);
    if (!v || strcmp(v, "v1") != 0) {
        diag_error(d, yamlx_loc(doc, api ? api : root), "apiVersion",
                   "not a v1 ConfigMap; expected v1, got '%s'", v ? v : "nothing");
        ok = false;
    }
    yaml_node_t *data = yamlx_map_get(doc, root, "data");
    size_t n = data && data->type == YAML_MAPPING_NODE
                   ? (size_t)(data->data.mapping.pairs.top - data->data.mapping.pairs.start)
                   : 0;
    if (n != 1) {
        diag_error(d, yamlx_loc(doc, data ? data : root), "data",
                   "a ConfigMap holds one config here; expected a mapping with one entry like "
                   "`config.yaml: |`, got %s",
                   !data                              ? "nothing"
                   : data->type != YAML_MAPPING_NODE ? yamlx_kind(data)
                   : n == 0                           ? "no entry"
                                                      : "several entries");
        return NULL;
    }
    yaml_node_pair_t *p = data->data.mapping.pairs.start;
    yaml_node_t *k = yamlx_node(doc, p->key), *val = yamlx_node(doc, p->value);
    if (!val || val->type != YAML_SCALAR_NODE ||
        val->data.scalar.style != YAML_LITERAL_SCALAR_STYLE) {
        char path[256];
        snprintf(path, sizeof path, "data.%s", yamlx_scalar(k) ? yamlx_scalar(k) : "?");
        diag_error(d, yamlx_loc(doc, val), path,
                   "not a literal block; expected the config as a literal block scalar "
                   "(`%s: |` and the config indented below it), got %s",
                   yamlx_scalar(k) ? yamlx_scalar(k) : "config.yaml",
                   val && val->type == YAML_SCALAR_NODE ? "another scalar style"
                                                        : yamlx_kind(val));
        return NULL;
    }
    return ok ? val : NULL;
}

int configmap_load_buffer(const char *name, const void *buf, size_t len, arena *names, diag *d,
                          yamlx_doc **out)
{
    *out = NULL;
    yamlx_doc *doc = NULL;
    int rc = yamlx_load_buffer(name, buf, len, names, d, &doc);
    if (rc) {
        return rc;
    }
    yaml_node_t *root = yamlx_root(doc);
    const char *kind = yamlx_scalar(yamlx_map_get(doc, root, "kind"));
    if (!kind || strcmp(kind, "ConfigMap") != 0) {
        *out = doc; /* the config itself */
        return 0;
    }
    yaml_node_t *val = config_value(doc, root, d);
    if (!val) {
        yamlx_destroy(doc);
        return SIM_EINPUT;
    }
    /* The block's text starts on the line after its indicator, indented by block_indent. */
    int line_off = (int)val->start_mark.line + 1;
    int col_off = block_indent(buf, len, val->start_mark.index);
    size_t tlen = val->data.scalar.length;
    char *text = xmalloc(tlen + 1, "ConfigMap config");
    memcpy(text, val->data.scalar.value, tlen);
    text[tlen] = '\0';
    yamlx_destroy(doc);
    rc = yamlx_load_buffer_at(name, text, tlen, line_off, col_off, names, d, out);
    free(text);
    return rc;
}

int configmap_load_file(const char *path, arena *names, diag *d, yamlx_doc **out)
{
    *out = NULL;
    char *buf;
    size_t len;
    int rc = fileio_read_all(path, YAMLX_MAX_FILE_BYTES, &buf, &len);
    if (rc) {
        return rc;
    }
    rc = configmap_load_buffer(path, buf, len, names, d, out);
    free(buf);
    return rc;
}
