#include "sim/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/xalloc.h"

typedef struct arena_block {
    struct arena_block *next;
    size_t used, cap;
    _Alignas(16) unsigned char data[];
} arena_block;

struct arena {
    arena_block *head;
};

enum { ARENA_BLOCK = 64 * 1024 };

arena *arena_create(void)
{
    return xcalloc(1, sizeof(arena), "arena");
}

void arena_destroy(arena *a)
{
    if (!a) {
        return;
    }
    arena_block *b = a->head;
    while (b) {
        arena_block *n = b->next;
        free(b);
        b = n;
    }
    free(a);
}

void *arena_alloc(arena *a, size_t n)
{
    size_t need = (n + 15u) & ~(size_t)15u;
    if (need < n) {
        need = SIZE_MAX; /* overflow: let xmalloc report it */
    }
    arena_block *b = a->head;
    if (!b || b->cap - b->used < need) {
        size_t cap = need > ARENA_BLOCK ? need : ARENA_BLOCK;
        if (cap > SIZE_MAX - sizeof(arena_block)) {
            cap = SIZE_MAX - sizeof(arena_block);
        }
        b = xmalloc(sizeof(arena_block) + cap, "arena block");
        b->cap = cap;
        b->used = 0;
        b->next = a->head;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += need;
    memset(p, 0, n);
    return p;
}

void *arena_calloc(arena *a, size_t count, size_t size)
{
    if (size && count > SIZE_MAX / size) {
        return arena_alloc(a, SIZE_MAX);
    }
    return arena_alloc(a, count * size);
}

char *arena_strndup(arena *a, const char *s, size_t n)
{
    char *d = arena_alloc(a, n + 1);
    memcpy(d, s, n);
    d[n] = '\0';
    return d;
}

char *arena_strdup(arena *a, const char *s)
{
    if (!s) {
        return NULL;
    }
    return arena_strndup(a, s, strlen(s));
}
