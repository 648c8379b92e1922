#include "experiments/yamlx.h"

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "experiments/fileio.h"
#include "sim/err.h"
#include "sim/xalloc.h"

struct yamlx_doc {
    yaml_document_t ydoc;
    const char *name;   /* arena-owned */
    arena *names;       /* borrowed: labels of override nodes go here */
    int first_added_id; /* ids >= this were made by yamlx_set */
    int line_off, col_off; /* where the text sits in its file (yamlx_load_buffer_at) */
    int n_labels, cap_labels;
    const char **labels; /* labels[id - first_added_id], arena-owned strings */
};

/* libyaml reports allocation failure as a plain 0; treat it as xmalloc does. */
static _Noreturn void out_of_memory(const char *what)
{
    fprintf(stderr, "out of memory: libyaml allocation for %s\n", what);
    abort();
}

src_loc yamlx_loc_from_mark(const char *file, yaml_mark_t mark)
{
    /* libyaml counts lines and columns from 0; diagnostics count from 1. */
    src_loc at = {file, (int)mark.line + 1, (int)mark.column + 1};
    return at;
}

/* Text embedded in a file at 0-based line `line_off`, every line indented by `col_off`. */
typedef struct text_pos {
    int line_off, col_off;
} text_pos;

static src_loc shifted(src_loc at, text_pos pos)
{
    at.line += at.line > 0 ? pos.line_off : 0;
    at.col += at.line > 0 ? pos.col_off : 0;
    return at;
}

static void report_parser_error(const yaml_parser_t *p, const char *name, const void *buf,
                                size_t len, text_pos pos, diag *d)
{
    /* reader errors (bad UTF-8) carry a byte offset, not a mark */
    src_loc at = shifted(p->error == YAML_READER_ERROR
                             ? diag_loc_from_offset(name, buf, len, p->problem_offset)
                             : yamlx_loc_from_mark(name, p->problem_mark),
                         pos);
    const char *problem = p->problem ? p->problem : "cannot parse YAML";
    diag_error(d, at, NULL, "%s", problem);
}

/* Refuse nesting deeper than YAMLX_MAX_DEPTH before the document is built (libyaml's loader takes
 * quadratic time in the depth). Walks the events only up to the first too-deep collection; a
 * syntax error ends the walk quietly (yaml_parser_load reports it). Returns false after
 * reporting to d. */
static bool depth_ok(const char *name, const void *buf, size_t len, text_pos pos, diag *d)
{
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        out_of_memory("yaml parser");
    }
    yaml_parser_set_input_string(&p, buf, len);
    int depth = 0;
    bool ok = true, done = false;
    while (!done) {
        yaml_event_t ev;
        if (!yaml_parser_parse(&p, &ev)) {
            break;
        }
        if (ev.type == YAML_MAPPING_START_EVENT || ev.type == YAML_SEQUENCE_START_EVENT) {
            if (++depth > YAMLX_MAX_DEPTH) {
                diag_error(d, shifted(yamlx_loc_from_mark(name, ev.start_mark), pos), NULL,
                           "nesting too deep; expected at most %d nested mappings and "
                           "sequences, got more",
                           YAMLX_MAX_DEPTH);
                ok = false;
                done = true;
            }
        } else if (ev.type == YAML_MAPPING_END_EVENT || ev.type == YAML_SEQUENCE_END_EVENT) {
            depth--;
        } else if (ev.type == YAML_STREAM_END_EVENT) {
            done = true;
        }
        yaml_event_delete(&ev);
    }
    yaml_parser_delete(&p);
    return ok;
}

int yamlx_load_buffer(const char *name, const void *buf, size_t len, arena *names, diag *d,
                      yamlx_doc **out)
{
    return yamlx_load_buffer_at(name, buf, len, 0, 0, names, d, out);
}

int yamlx_load_buffer_at(const char *name, const void *buf, size_t len, int line_off,
                         int col_off, arena *names, diag *d, yamlx_doc **out)
{
    *out = NULL;
    text_pos pos = {line_off, col_off};
    const char *dname = arena_strdup(names, name);
    if (!depth_ok(dname, buf, len, pos, d)) {
        return SIM_EINPUT;
    }
    yaml_parser_t p;
    if (!yaml_parser_initialize(&p)) {
        out_of_memory("yaml parser");
    }
    yaml_parser_set_input_string(&p, buf, len);
    yamlx_doc *doc = xcalloc(1, sizeof *doc, "yaml document");
    doc->name = dname;
    doc->names = names;
    doc->line_off = line_off;
    doc->col_off = col_off;
    if (!yaml_parser_load(&p, &doc->ydoc)) {
        report_parser_error(&p, dname, buf, len, pos, d);
        yaml_parser_delete(&p);
        free(doc);
        return SIM_EINPUT;
    }
    /* One document per file: a second one would be silently ignored otherwise. */
    yaml_document_t extra;
    if (!yaml_parser_load(&p, &extra)) {
        report_parser_error(&p, dname, buf, len, pos, d);
        yaml_parser_delete(&p);
        yamlx_destroy(doc);
        return SIM_EINPUT;
    }
    yaml_node_t *extra_root = yaml_document_get_root_node(&extra);
    if (extra_root) {
        diag_error(d, shifted(yamlx_loc_from_mark(dname, extra.start_mark), pos), NULL,
                   "second YAML document; expected one document per file, got '---'");
        yaml_document_delete(&extra);
        yaml_parser_delete(&p);
        yamlx_destroy(doc);
        return SIM_EINPUT;
    }
    yaml_document_delete(&extra);
    yaml_parser_delete(&p);
    doc->first_added_id = yamlx_node_count(doc) + 1;
    *out = doc;
    return 0;
}

int yamlx_load_file(const char *path, arena *names, diag *d, yamlx_doc **out)
{
    *out = NULL;
    char *buf;
    size_t len;
    int rc = fileio_read_all(path, YAMLX_MAX_FILE_BYTES, &buf, &len);
    if (rc) {
        return rc;
    }
    rc = yamlx_load_buffer(path, buf, len, names, d, out);
    free(buf);
    return rc;
}

void yamlx_destroy(yamlx_doc *doc)
{
    if (!doc) {
        return;
    }
    yaml_document_delete(&doc->ydoc);
    free(doc->labels);
    free(doc);
}

const char *yamlx_name(const yamlx_doc *doc)
{
    return doc->name;
}

yaml_node_t *yamlx_root(yamlx_doc *doc)
{
    return yaml_document_get_root_node(&doc->ydoc);
}

yaml_node_t *yamlx_node(yamlx_doc *doc, int id)
{
    return yaml_document_get_node(&doc->ydoc, id);
}

int yamlx_node_id(const yamlx_doc *doc, const yaml_node_t *node)
{
    return (int)(node - doc->ydoc.nodes.start) + 1;
}

int yamlx_node_count(const yamlx_doc *doc)
{
    return (int)(doc->ydoc.nodes.top - doc->ydoc.nodes.start);
}

src_loc yamlx_loc(const yamlx_doc *doc, const yaml_node_t *node)
{
    if (!node) {
        src_loc at = {doc->name, 1, 1};
        return at;
    }
    int id = yamlx_node_id(doc, node);
    if (id >= doc->first_added_id && id - doc->first_added_id < doc->n_labels) {
        src_loc at = {doc->labels[id - doc->first_added_id], 0, 0};
        return at;
    }
    text_pos pos = {doc->line_off, doc->col_off};
    return shifted(yamlx_loc_from_mark(doc->name, node->start_mark), pos);
}

const char *yamlx_scalar(const yaml_node_t *node)
{
    if (!node || node->type != YAML_SCALAR_NODE) {
        return NULL;
    }
    return (const char *)node->data.scalar.value;
}

const char *yamlx_kind(const yaml_node_t *node)
{
    if (!node) {
        return "nothing";
    }
    switch (node->type) {
    case YAML_MAPPING_NODE:
        return "a mapping";
    case YAML_SEQUENCE_NODE:
        return "a sequence";
    case YAML_SCALAR_NODE:
        return "a scalar";
    case YAML_NO_NODE:
        break;
    }
    return "nothing";
}

yaml_node_t *yamlx_map_get(yamlx_doc *doc, const yaml_node_t *map, const char *key)
{
    if (!map || map->type != YAML_MAPPING_NODE) {
        return NULL;
    }
    for (yaml_node_pair_t *p = map->data.mapping.pairs.start; p < map->data.mapping.pairs.top;
         p++) {
        const char *k = yamlx_scalar(yamlx_node(doc, p->key));
        if (k && !strcmp(k, key)) {
            return yamlx_node(doc, p->value);
        }
    }
    return NULL;
}

/* ---- overrides ---------------------------------------------------------------------------- */

/* Record that node `id` was made by the override labelled `label`. */
static void label_node(yamlx_doc *doc, int id, const char *label)
{
    int idx = id - doc->first_added_id;
    SIM_ASSERT(idx >= 0);
    if (idx >= doc->cap_labels) {
        int cap = doc->cap_labels ? doc->cap_labels : 8;
        while (cap <= idx) {
            cap *= 2;
        }
        doc->labels = xrealloc(doc->labels, (size_t)cap * sizeof *doc->labels, "override labels");
        for (int i = doc->cap_labels; i < cap; i++) {
            doc->labels[i] = NULL;
        }
        doc->cap_labels = cap;
    }
    doc->labels[idx] = label;
    if (idx >= doc->n_labels) {
        doc->n_labels = idx + 1;
    }
}

static int add_scalar(yamlx_doc *doc, const char *text, size_t n, const char *label)
{
    if (n > (size_t)INT32_MAX) {
        return 0;
    }
    int id = yaml_document_add_scalar(&doc->ydoc, NULL, (const yaml_char_t *)text, (int)n,
                                      YAML_PLAIN_SCALAR_STYLE);
    if (id) {
        label_node(doc, id, label);
    }
    return id;
}

static int add_mapping(yamlx_doc *doc, const char *label)
{
    int id = yaml_document_add_mapping(&doc->ydoc, NULL, YAML_BLOCK_MAPPING_STYLE);
    if (id) {
        label_node(doc, id, label);
    }
    return id;
}

/* Longest key of mapping `map_id` that `rest` starts with, followed by '.', '[' or the end.
 * Returns the pair index or -1. */
static int match_key(yamlx_doc *doc, int map_id, const char *rest, size_t *key_len)
{
    yaml_node_t *map = yamlx_node(doc, map_id);
    int best = -1;
    size_t best_len = 0;
    int n = (int)(map->data.mapping.pairs.top - map->data.mapping.pairs.start);
    for (int i = 0; i < n; i++) {
        const char *k = yamlx_scalar(yamlx_node(doc, map->data.mapping.pairs.start[i].key));
        if (!k) {
            continue;
        }
        size_t kl = strlen(k);
        if (kl == 0 || kl < best_len || strncmp(rest, k, kl) != 0) {
            continue;
        }
        char next = rest[kl];
        if (next == '\0' || next == '.' || next == '[') {
            if (kl > best_len || best < 0) {
                best = i;
                best_len = kl;
            }
        }
    }
    *key_len = best_len;
    return best;
}

/* Whether `path` is well formed: key segments separated by '.', each key or index followed by
 * [N] indices, e.g. `a.b[2][0].c`. Checked before the tree is touched, so a malformed path
 * changes nothing. */
static bool path_syntax_ok(const char *path)
{
    const char *p = path;
    for (;;) {
        size_t key = strcspn(p, ".[]");
        if (key == 0) {
            return false; /* empty key: leading '.', "..", trailing '.', or '[' first */
        }
        p += key;
        while (*p == '[') {
            const char *q = p + 1;
            while (*q >= '0' && *q <= '9') {
                q++;
            }
            if (q == p + 1 || *q != ']') {
                return false;
            }
            p = q + 1;
        }
        if (*p == '\0') {
            return true;
        }
        if (*p != '.') {
            return false;
        }
        p++;
    }
}

/* The value node of an override: node `value_id` when > 0, else a new scalar `value`. */
static int make_value(yamlx_doc *doc, const char *value, int value_id, const char *label)
{
    return value_id > 0 ? value_id : add_scalar(doc, value, strlen(value), label);
}

/* Set `path` (checked by path_syntax_ok) to `value` or to node value_id (see make_value);
 * problems are reported at `at`. Returns 0 or SIM_EINPUT. */
static int set_path(yamlx_doc *doc, const char *path, const char *value, int value_id,
                    const char *label, src_loc at, diag *d)
{
    int rc = SIM_EINPUT;
    yaml_node_t *root = yamlx_root(doc);
    if (!root || root->type != YAML_MAPPING_NODE) {
        diag_error(d, at, NULL,
                   "cannot apply override; expected a document that is a mapping, "
                   "got %s",
                   yamlx_kind(root));
        return rc;
    }
    int cur = yamlx_node_id(doc, root);
    const char *rest = path;
    size_t done = 0; /* length of path consumed, for messages */
    for (;;) {
        yaml_node_t *node = yamlx_node(doc, cur);
        if (*rest == '[') {
            char *end = NULL;
            errno = 0;
            unsigned long idx =
                (rest[1] >= '0' && rest[1] <= '9') ? strtoul(rest + 1, &end, 10) : 0;
            if (!end || *end != ']' || errno == ERANGE) {
                diag_error(d, at, path,
                           "malformed index; expected [N] with N a whole number, "
                           "got '%s'",
                           rest);
                return rc;
            }
            size_t seg = (size_t)(end + 1 - rest);
            if (node->type != YAML_SEQUENCE_NODE) {
                diag_error(d, at, path,
                           "not a sequence at '%.*s'; expected a sequence to index, "
                           "got %s",
                           (int)done, path, yamlx_kind(node));
                return rc;
            }
            size_t n = (size_t)(node->data.sequence.items.top - node->data.sequence.items.start);
            if (idx >= n) {
                diag_error(d, at, path, "no item '%.*s'; expected an index below %zu, got '%lu'",
                           (int)(done + seg), path, n, idx);
                return rc;
            }
            yaml_node_item_t *item = &node->data.sequence.items.start[idx];
            rest += seg;
            done += seg;
            if (*rest == '\0') {
                int id = make_value(doc, value, value_id, label);
                if (!id) {
                    goto bad_value;
                }
                /* the node array may have moved: look the sequence up again */
                yamlx_node(doc, cur)->data.sequence.items.start[idx] = id;
                return 0;
            }
            cur = *item;
            if (*rest == '.') {
                rest++;
                done++;
            }
            continue;
        }
        if (*rest == '\0' || *rest == '.') {
            diag_error(d, at, path, "empty path segment; expected a key name, got '%s'", path);
            return rc;
        }
        if (node->type != YAML_MAPPING_NODE) {
            diag_error(d, at, path,
                       "not a mapping at '%.*s'; expected a mapping to hold '%s', "
                       "got %s",
                       done ? (int)done - 1 : 0, path, rest, yamlx_kind(node));
            return rc;
        }
        size_t klen = 0;
        int pair = match_key(doc, cur, rest, &klen);
        if (pair < 0) {
            klen = strcspn(rest, ".[");
        }
        bool last = rest[klen] == '\0';
        if (pair >= 0 && last) {
            int id = make_value(doc, value, value_id, label);
            if (!id) {
                goto bad_value;
            }
            yamlx_node(doc, cur)->data.mapping.pairs.start[pair].value = id;
            return 0;
        }
        if (pair >= 0) {
            cur = yamlx_node(doc, cur)->data.mapping.pairs.start[pair].value;
        } else {
            /* Absent key: add it (a mapping on the way, or the value at the end). */
            int kid = add_scalar(doc, rest, klen, label);
            int vid = last ? make_value(doc, value, value_id, label) : add_mapping(doc, label);
            if (!kid || !vid) {
                goto bad_value;
            }
            if (!yaml_document_append_mapping_pair(&doc->ydoc, cur, kid, vid)) {
                out_of_memory("yaml mapping pair");
            }
            if (last) {
                return 0;
            }
            cur = vid;
        }
        rest += klen;
        done += klen;
        if (*rest == '.') {
            rest++;
            done++;
        }
    }
bad_value:
    diag_error(d, at, path, "unusable override text; expected UTF-8 text, got '%s'",
               value ? value : "");
    return rc;
}

/* Copy node `src` of the parsed override `from` into doc (labelled as the override). Returns the
 * new node's id, or 0 when the value nests deeper than YAMLX_MAX_DEPTH or libyaml fails. */
static int copy_node(yamlx_doc *doc, yaml_document_t *from, const yaml_node_t *src,
                     const char *label, int depth)
{
    if (!src || depth > YAMLX_MAX_DEPTH) {
        return 0;
    }
    if (src->type == YAML_SCALAR_NODE) {
        return add_scalar(doc, (const char *)src->data.scalar.value, src->data.scalar.length,
                          label);
    }
    if (src->type == YAML_SEQUENCE_NODE) {
        int id = yaml_document_add_sequence(&doc->ydoc, NULL, YAML_FLOW_SEQUENCE_STYLE);
        if (!id) {
            return 0;
        }
        label_node(doc, id, label);
        for (yaml_node_item_t *it = src->data.sequence.items.start;
             it < src->data.sequence.items.top; it++) {
            int item = copy_node(doc, from, yaml_document_get_node(from, *it), label, depth + 1);
            if (!item || !yaml_document_append_sequence_item(&doc->ydoc, id, item)) {
                return 0;
            }
        }
        return id;
    }
    int id = add_mapping(doc, label);
    if (!id) {
        return 0;
    }
    for (yaml_node_pair_t *p = src->data.mapping.pairs.start; p < src->data.mapping.pairs.top;
         p++) {
        int k = copy_node(doc, from, yaml_document_get_node(from, p->key), label, depth + 1);
        int v = k ? copy_node(doc, from, yaml_document_get_node(from, p->value), label, depth + 1)
                  : 0;
        if (!v || !yaml_document_append_mapping_pair(&doc->ydoc, id, k, v)) {
            return 0;
        }
    }
    return id;
}

/* An override's VALUE that opens with '{' or '[' is a YAML flow mapping or sequence (the form
 * `slicesim plan` prints its answer in, and a sweep axis's values take): parse it and copy its
 * nodes into doc. Returns the root's id, or 0 after reporting to d. */
static int flow_value(yamlx_doc *doc, const char *path, const char *value, const char *label,
                      src_loc at, diag *d)
{
    yaml_parser_t p;
    yaml_document_t tmp;
    if (!yaml_parser_initialize(&p)) {
        out_of_memory("yaml parser");
    }
    yaml_parser_set_input_string(&p, (const unsigned char *)value, strlen(value));
    int id = 0;
    if (!yaml_parser_load(&p, &tmp)) {
        diag_error(d, at, path,
                   "not a YAML flow value (%s); expected a mapping like {key: value, ...} or a "
                   "sequence like [a, b], got '%s'",
                   p.problem ? p.problem : "syntax error", value);
        yaml_parser_delete(&p);
        return 0;
    }
    /* one value and nothing after it: "{a: 1} x" is refused, not read as {a: 1} */
    yaml_document_t rest;
    bool more = true;
    if (yaml_parser_load(&p, &rest)) {
        more = yaml_document_get_root_node(&rest) != NULL;
        yaml_document_delete(&rest);
    }
    yaml_node_t *root = more ? NULL : yaml_document_get_root_node(&tmp);
    bool flow = root && ((root->type == YAML_MAPPING_NODE &&
                          root->data.mapping.style == YAML_FLOW_MAPPING_STYLE) ||
                         (root->type == YAML_SEQUENCE_NODE &&
                          root->data.sequence.style == YAML_FLOW_SEQUENCE_STYLE));
    if (!flow) {
        diag_error(d, at, path,
                   "not a YAML flow value; expected one mapping like {key: value, ...} or one "
                   "sequence like [a, b], got '%s'",
                   value);
    } else if (!(id = copy_node(doc, &tmp, root, label, 0))) {
        diag_error(d, at, path, "nesting too deep; expected at most %d levels, got '%s'",
                   YAMLX_MAX_DEPTH, value);
    }
    yaml_document_delete(&tmp);
    yaml_parser_delete(&p);
    return id;
}

int yamlx_set(yamlx_doc *doc, const char *assignment, diag *d)
{
    size_t alen = strlen(assignment);
    char *label_buf = xmalloc(alen + 7, "override label");
    snprintf(label_buf, alen + 7, "--set %s", assignment);
    const char *label = arena_strdup(doc->names, label_buf);
    free(label_buf);
    src_loc at = {label, 0, 0};

    const char *eq = strchr(assignment, '=');
    if (!eq || eq == assignment) {
        diag_error(d, at, NULL, "malformed override; expected PATH=VALUE, got '%s'", assignment);
        return SIM_EINPUT;
    }
    size_t plen = (size_t)(eq - assignment);
    char *path = xmalloc(plen + 1, "override path");
    memcpy(path, assignment, plen);
    path[plen] = '\0';
    int rc = SIM_EINPUT;
    if (!path_syntax_ok(path)) {
        diag_error(d, at, NULL,
                   "malformed path; expected keys and [N] indices like "
                   "workload.jobs[0].rate, got '%s'",
                   path);
    } else if (eq[1] == '{' || eq[1] == '[') {
        int id = flow_value(doc, path, eq + 1, label, at, d);
        rc = id ? set_path(doc, path, NULL, id, label, at, d) : SIM_EINPUT;
    } else {
        rc = set_path(doc, path, eq + 1, 0, label, at, d);
    }
    free(path);
    return rc;
}

int yamlx_set_node(yamlx_doc *doc, const char *path, int value_id, src_loc at, diag *d)
{
    SIM_ASSERT(value_id >= 1 && value_id <= yamlx_node_count(doc));
    if (!path_syntax_ok(path)) {
        diag_error(d, at, NULL,
                   "malformed path; expected keys and [N] indices like "
                   "workload.jobs[0].rate, got '%s'",
                   path);
        return SIM_EINPUT;
    }
    /* keys the override adds report the axis's own position */
    char buf[512];
    snprintf(buf, sizeof buf, "%s:%d:%d", at.file, at.line, at.col);
    return set_path(doc, path, NULL, value_id, arena_strdup(doc->names, buf), at, d);
}
