/*
 * _body: the C half of reading a request body (body.py): the first key that a JSON text
 * repeats within one object, found in one pass over the bytes without building any Python
 * object, and the thread that drops a spooled body's pages while it is parsed.
 *
 * first_problem(buffer) -> None, ("duplicate", path) for the first repeated key, or, when no
 * key repeats, ("nul", path) for the first string (key or value) that spells \u0000 (a
 * second pass finds where). ("too_many_keys", path) names an object whose keys, with those
 * of the objects it is in, pass MAX_LIVE_KEYS or MAX_LIVE_KEY_BYTES: what the scan holds is
 * bounded whatever arrives. ("too_many_items", path) names an array of more than MAX_ITEMS
 * elements: the decoder holds one object per element of a List's items (a msgspec.Raw, some
 * 66 bytes: a body of a million tiny items cost as many objects), and no List a cluster
 * holds comes near it. A path is a list of keys (str) and array indices (int),
 * outermost first. Raises ValueError when the text is not JSON as far as this scanner reads
 * it (or nests deeper than MAX_DEPTH): the caller then leaves the body to the decoder,
 * which refuses it and names why.
 *
 * Keys are compared as decoded strings: an escaped key ("\u0061", "k:{\"a\":1}") is decoded
 * to UTF-8 first (surrogate pairs joined, a lone surrogate kept as its three-byte form), so
 * that two spellings of one key are the same key, as for Python's json and msgspec.
 * The GIL is released while scanning.
 *
 * release_start(buffer) / release_stop(handle): while a read-only *file* mapping is parsed,
 * a thread of its own (no GIL) drops the mapping's resident pages every RELEASE_EVERY_NS
 * (madvise MADV_DONTNEED). Mapped file pages count in the process's resident size until
 * unmapped, and every pass over a large body (this scan, msgspec's, each item's) touches
 * all of them: dropped, a page that is read again is mapped back from the page cache, so
 * the data is unchanged and the resident size stays near what the passes touch between two
 * drops. Never for anonymous memory, where MADV_DONTNEED would zero the data.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <pthread.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEPTH 1024
#define LINEAR_KEYS 8
/* Bounds on what the open objects hold at once, so that memory stays a small multiple of
 * what a real body needs whatever arrives: no Kubernetes object comes near them (the API
 * server takes requests of up to 3 MiB). Past either the scan stops with "too_many_keys". */
#define MAX_LIVE_KEYS (1 << 20)
#define MAX_LIVE_KEY_BYTES (64 << 20)
/* Elements of one array at most: three times the pods of the largest cluster Kubernetes
 * supports (150,000), some 33 MB of the decoder's per-item objects. Past it the scan stops
 * with "too_many_items". */
#define MAX_ITEMS 500000
/* A closed object's buffers are kept for the next object at its depth only when small. */
#define KEEP_KEYS 4096

typedef struct {
    uint64_t hash;
    size_t len;
    const unsigned char *ptr; /* into the input, or NULL: then off into the frame's arena */
    size_t off;
} Key;

typedef struct {
    int is_object;
    Py_ssize_t index;          /* arrays: the current element */
    Key *keys;                 /* objects: the keys seen so far */
    size_t nkeys, capkeys;
    uint32_t *table;           /* open addressing over keys (1-based), once past LINEAR_KEYS */
    size_t tablesize, tablecap;
    unsigned char *arena;      /* decoded escaped keys */
    size_t arenalen, arenacap;
} Frame;

typedef struct {
    const unsigned char *p, *end;
    Frame frames[MAX_DEPTH];
    int depth;                 /* frames in use */
    int error;                 /* 1: malformed or too deep, 2: out of memory */
    int duplicate;
    int too_many_keys;         /* stopped at MAX_LIVE_KEYS or MAX_LIVE_KEY_BYTES */
    int too_many_items;        /* stopped at an array's MAX_ITEMS + 1st element */
    size_t live_keys;          /* keys held by the open objects */
    size_t live_key_bytes;     /* decoded escaped keys held by the open objects */
    int nul_seen;              /* a string (key or value) spells \u0000 */
    int stop_at_nul;           /* second pass: stop at the first such string */
    int nul_is_key;            /* where it stopped: a key (its frame's last) or a value */
} Scanner;

/* Python's own keyed string hash (SipHash under a per-process random key, the one its dicts
 * use): an unkeyed hash would let a body of keys crafted to collide make the table quadratic.
 * It touches no Python object, so it runs with the GIL released. */
static uint64_t hash_bytes(const unsigned char *s, size_t n) {
    return (uint64_t)_Py_HashBytes(s, (Py_ssize_t)n);
}

static const unsigned char *key_bytes(const Frame *f, const Key *k) {
    return k->ptr ? k->ptr : f->arena + k->off;
}

static int grow(void **buf, size_t *cap, size_t need, size_t size) {
    if (need <= *cap) return 0;
    size_t cap2 = *cap ? *cap : 16;
    while (cap2 < need) cap2 *= 2;
    void *n = realloc(*buf, cap2 * size);
    if (!n) return -1;
    *buf = n;
    *cap = cap2;
    return 0;
}

static int rebuild_table(Frame *f) {
    size_t size = 64;
    while (size < f->nkeys * 4) size *= 2;
    if (grow((void **)&f->table, &f->tablecap, size, sizeof(uint32_t))) return -1;
    f->tablesize = size;
    memset(f->table, 0, size * sizeof(uint32_t));
    for (size_t i = 0; i < f->nkeys; i++) {
        size_t slot = (size_t)f->keys[i].hash & (size - 1);
        while (f->table[slot]) slot = (slot + 1) & (size - 1);
        f->table[slot] = (uint32_t)(i + 1);
    }
    return 0;
}

/* Adds the key; 1 when the object already had it, 0 when new, -1 out of memory. */
static int add_key(Frame *f, Key k) {
    const unsigned char *kb = k.ptr ? k.ptr : f->arena + k.off;
    if (f->nkeys < LINEAR_KEYS || !f->tablesize) {
        for (size_t i = 0; i < f->nkeys; i++) {
            const Key *o = &f->keys[i];
            if (o->hash == k.hash && o->len == k.len && !memcmp(key_bytes(f, o), kb, k.len))
                return 1;
        }
    } else {
        size_t mask = f->tablesize - 1, slot = (size_t)k.hash & mask;
        while (f->table[slot]) {
            const Key *o = &f->keys[f->table[slot] - 1];
            if (o->hash == k.hash && o->len == k.len && !memcmp(key_bytes(f, o), kb, k.len))
                return 1;
            slot = (slot + 1) & mask;
        }
    }
    if (f->nkeys >= UINT32_MAX - 1) return -1;
    if (grow((void **)&f->keys, &f->capkeys, f->nkeys + 1, sizeof(Key))) return -1;
    f->keys[f->nkeys++] = k;
    if (f->nkeys == LINEAR_KEYS || (f->tablesize && f->nkeys * 2 > f->tablesize)) {
        if (rebuild_table(f)) return -1;
    } else if (f->tablesize) {
        size_t mask = f->tablesize - 1, slot = (size_t)k.hash & mask;
        while (f->table[slot]) slot = (slot + 1) & mask;
        f->table[slot] = (uint32_t)f->nkeys;
    }
    return 0;
}

static void skip_ws(Scanner *s) {
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\n' || *s->p == '\r' || *s->p == '\t'))
        s->p++;
}

static int hexval(unsigned char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

static int read_hex4(const unsigned char *p, const unsigned char *end, unsigned *out) {
    if (end - p < 4) return -1;
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        int h = hexval(p[i]);
        if (h < 0) return -1;
        v = v * 16 + (unsigned)h;
    }
    *out = v;
    return 0;
}

/* The string at s->p (its opening quote). Sets *escaped when it holds a backslash. The next
 * quote is looked for again only past an escaped one: looking for it after every escape
 * made a string of n escapes cost n times its length (3 million escapes: minutes). */
static int skip_string(Scanner *s, const unsigned char **start, size_t *len, int *escaped) {
    const unsigned char *p = s->p + 1;
    const unsigned char *q = NULL;
    *escaped = 0;
    for (;;) {
        if (p >= s->end) return -1;
        if (q == NULL || q < p) q = memchr(p, '"', (size_t)(s->end - p));
        if (!q) return -1;
        const unsigned char *b = memchr(p, '\\', (size_t)(q - p));
        if (!b) {
            *start = s->p + 1;
            *len = (size_t)(q - (s->p + 1));
            s->p = q + 1;
            return 0;
        }
        *escaped = 1;
        if (s->end - b >= 6 && b[1] == 'u' && b[2] == '0' && b[3] == '0' && b[4] == '0' &&
            b[5] == '0')
            s->nul_seen = 1;
        p = b + 2; /* past the escaped character (an escaped quote included) */
    }
}

static int put_utf8(Frame *f, unsigned cp) {
    unsigned char b[4];
    size_t n;
    if (cp < 0x80) { b[0] = (unsigned char)cp; n = 1; }
    else if (cp < 0x800) { b[0] = 0xC0 | (cp >> 6); b[1] = 0x80 | (cp & 0x3F); n = 2; }
    else if (cp < 0x10000) {
        b[0] = 0xE0 | (cp >> 12); b[1] = 0x80 | ((cp >> 6) & 0x3F); b[2] = 0x80 | (cp & 0x3F);
        n = 3;
    } else {
        b[0] = 0xF0 | (cp >> 18); b[1] = 0x80 | ((cp >> 12) & 0x3F);
        b[2] = 0x80 | ((cp >> 6) & 0x3F); b[3] = 0x80 | (cp & 0x3F); n = 4;
    }
    if (grow((void **)&f->arena, &f->arenacap, f->arenalen + n, 1)) return -2;
    memcpy(f->arena + f->arenalen, b, n);
    f->arenalen += n;
    return 0;
}

/* Decodes an escaped key into the frame's arena; -1 malformed, -2 out of memory. */
static int decode_key(Frame *f, const unsigned char *p, size_t n) {
    const unsigned char *end = p + n;
    while (p < end) {
        if (*p != '\\') {
            const unsigned char *q = p;
            while (q < end && *q != '\\') q++;
            size_t m = (size_t)(q - p);
            if (grow((void **)&f->arena, &f->arenacap, f->arenalen + m, 1)) return -2;
            memcpy(f->arena + f->arenalen, p, m);
            f->arenalen += m;
            p = q;
            continue;
        }
        if (p + 1 >= end) return -1;
        unsigned cp;
        switch (p[1]) {
        case '"': cp = '"'; break;
        case '\\': cp = '\\'; break;
        case '/': cp = '/'; break;
        case 'b': cp = '\b'; break;
        case 'f': cp = '\f'; break;
        case 'n': cp = '\n'; break;
        case 'r': cp = '\r'; break;
        case 't': cp = '\t'; break;
        case 'u': {
            if (read_hex4(p + 2, end, &cp)) return -1;
            if (cp >= 0xD800 && cp < 0xDC00 && end - p >= 12 && p[6] == '\\' && p[7] == 'u') {
                unsigned lo;
                if (!read_hex4(p + 8, end, &lo) && lo >= 0xDC00 && lo < 0xE000) {
                    cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
                    p += 6;
                }
            }
            p += 4;
            break;
        }
        default: return -1;
        }
        p += 2;
        int r = put_utf8(f, cp);
        if (r) return r;
    }
    return 0;
}

/* Closes the innermost container: its keys stop counting, and large buffers are let go. */
static void pop(Scanner *s) {
    Frame *f = &s->frames[--s->depth];
    s->live_keys -= f->nkeys;
    s->live_key_bytes -= f->arenalen;
    if (f->capkeys > KEEP_KEYS || f->arenacap > KEEP_KEYS * 64) {
        free(f->keys);
        free(f->table);
        free(f->arena);
        f->keys = NULL;
        f->table = NULL;
        f->arena = NULL;
        f->capkeys = f->tablecap = f->arenacap = 0;
    }
    f->nkeys = 0;
    f->tablesize = 0;
    f->arenalen = 0;
}

static int push(Scanner *s, int is_object) {
    if (s->depth >= MAX_DEPTH) return -1;
    Frame *f = &s->frames[s->depth++];
    f->is_object = is_object;
    f->index = 0;
    f->nkeys = 0;
    f->tablesize = 0;
    f->arenalen = 0;
    return 0;
}

/* Scans the whole text; stops at the first repeated key with the frames left as its path. */
static void scan(Scanner *s) {
    enum { VALUE, AFTER_VALUE } state = VALUE;
    for (;;) {
        skip_ws(s);
        if (state == VALUE) {
            if (s->p >= s->end) { s->error = 1; return; }
            unsigned char c = *s->p;
            if (c == '{' || c == '[') {
                if (push(s, c == '{')) { s->error = 1; return; }
                s->p++;
                skip_ws(s);
                if (s->p < s->end && *s->p == (c == '{' ? '}' : ']')) {
                    s->p++;
                    pop(s);
                    state = AFTER_VALUE;
                    continue;
                }
                if (c == '[') continue; /* the first element */
                /* the first key: fall through to the key reader below */
            } else if (c == '"') {
                const unsigned char *st; size_t n; int esc;
                if (skip_string(s, &st, &n, &esc)) { s->error = 1; return; }
                if (s->stop_at_nul && s->nul_seen) return;
                state = AFTER_VALUE;
                continue;
            } else if (c == '-' || (c >= '0' && c <= '9') || c == 't' || c == 'f' || c == 'n') {
                const unsigned char *q = s->p;
                while (q < s->end && (strchr("0123456789+-.eEtruefalsn", *q) && *q)) q++;
                s->p = q;
                state = AFTER_VALUE;
                continue;
            } else {
                s->error = 1;
                return;
            }
        } else { /* AFTER_VALUE */
            if (s->depth == 0) {
                if (s->p != s->end) s->error = 1;
                return;
            }
            if (s->p >= s->end) { s->error = 1; return; }
            Frame *f = &s->frames[s->depth - 1];
            unsigned char c = *s->p;
            if (c == ',') {
                s->p++;
                if (!f->is_object) {
                    if (++f->index >= MAX_ITEMS) { s->too_many_items = 1; return; }
                    state = VALUE;
                    continue;
                }
                skip_ws(s);
            } else if (c == (f->is_object ? '}' : ']')) {
                s->p++;
                pop(s);
                continue;
            } else {
                s->error = 1;
                return;
            }
        }
        /* A key of the innermost object, at s->p. */
        Frame *f = &s->frames[s->depth - 1];
        if (s->p >= s->end || *s->p != '"') { s->error = 1; return; }
        const unsigned char *st; size_t n; int esc;
        if (skip_string(s, &st, &n, &esc)) { s->error = 1; return; }
        if (s->live_keys >= MAX_LIVE_KEYS || s->live_key_bytes + n > MAX_LIVE_KEY_BYTES) {
            s->too_many_keys = 1;
            return;
        }
        Key k;
        if (esc) {
            size_t off = f->arenalen;
            int r = decode_key(f, st, n);
            if (r) { s->error = r == -2 ? 2 : 1; return; }
            s->live_key_bytes += f->arenalen - off;
            k.ptr = NULL;
            k.off = off;
            k.len = f->arenalen - off;
            k.hash = hash_bytes(f->arena + off, k.len);
        } else {
            k.ptr = st;
            k.off = 0;
            k.len = n;
            k.hash = hash_bytes(st, n);
        }
        if (s->stop_at_nul && s->nul_seen) {
            f->nkeys++; /* the key last, for the path */
            if (grow((void **)&f->keys, &f->capkeys, f->nkeys, sizeof(Key))) { s->error = 2; return; }
            f->keys[f->nkeys - 1] = k;
            s->nul_is_key = 1;
            return;
        }
        int r = add_key(f, k);
        if (r < 0) { s->error = 2; return; }
        if (r == 0) s->live_keys++;
        if (r == 1) {
            f->nkeys++; /* keep the repeated key last, for the path */
            if (grow((void **)&f->keys, &f->capkeys, f->nkeys, sizeof(Key))) { s->error = 2; return; }
            f->keys[f->nkeys - 1] = k;
            s->duplicate = 1;
            return;
        }
        skip_ws(s);
        if (s->p >= s->end || *s->p != ':') { s->error = 1; return; }
        s->p++;
        state = VALUE;
    }
}

/* The path through the first ``depth`` open containers (each object's latest key). */
static PyObject *path_of(Scanner *s, int depth) {
    PyObject *path = PyList_New(0);
    if (!path) return NULL;
    for (int d = 0; d < depth; d++) {
        Frame *f = &s->frames[d];
        PyObject *item;
        if (f->is_object) {
            const Key *k = &f->keys[f->nkeys - 1];
            item = PyUnicode_DecodeUTF8((const char *)key_bytes(f, k), (Py_ssize_t)k->len,
                                        "surrogatepass");
            if (!item) {
                PyErr_Clear();
                item = PyUnicode_DecodeUTF8((const char *)key_bytes(f, k), (Py_ssize_t)k->len,
                                            "replace");
            }
        } else {
            item = PyLong_FromSsize_t(f->index);
        }
        if (!item || PyList_Append(path, item)) {
            Py_XDECREF(item);
            Py_DECREF(path);
            return NULL;
        }
        Py_DECREF(item);
    }
    return path;
}

static void free_scanner(Scanner *s) {
    for (int d = 0; d < MAX_DEPTH; d++) {
        free(s->frames[d].keys);
        free(s->frames[d].table);
        free(s->frames[d].arena);
    }
    free(s);
}

/* One pass; 0, or -1 with a Python exception set. */
static int run(Py_buffer *view, int stop_at_nul, Scanner **out) {
    Scanner *s = calloc(1, sizeof(Scanner));
    if (!s) {
        PyErr_NoMemory();
        return -1;
    }
    s->p = view->buf;
    s->end = s->p + view->len;
    s->stop_at_nul = stop_at_nul;
    Py_BEGIN_ALLOW_THREADS
    scan(s);
    Py_END_ALLOW_THREADS
    if (s->error == 2) {
        free_scanner(s);
        PyErr_NoMemory();
        return -1;
    }
    if (s->error && !(stop_at_nul && s->nul_seen)) {
        free_scanner(s);
        PyErr_SetString(PyExc_ValueError, "not JSON as far as the key scanner reads it");
        return -1;
    }
    *out = s;
    return 0;
}

static PyObject *first_problem(PyObject *self, PyObject *arg) {
    Py_buffer view;
    if (PyObject_GetBuffer(arg, &view, PyBUF_SIMPLE)) return NULL;
    Scanner *s;
    PyObject *result = NULL;
    if (run(&view, 0, &s)) goto done;
    if (s->duplicate) {
        PyObject *path = path_of(s, s->depth);
        if (path) result = Py_BuildValue("(sN)", "duplicate", path);
    } else if (s->too_many_keys) {
        /* the object whose key went past the bound: the path to it, not into it */
        PyObject *path = path_of(s, s->depth - 1);
        if (path) result = Py_BuildValue("(sN)", "too_many_keys", path);
    } else if (s->too_many_items) {
        /* the array itself: the path to it */
        PyObject *path = path_of(s, s->depth - 1);
        if (path) result = Py_BuildValue("(sN)", "too_many_items", path);
    } else if (s->nul_seen) {
        free_scanner(s);
        if (run(&view, 1, &s)) goto done;
        PyObject *path = path_of(s, s->depth);
        if (path) result = Py_BuildValue("(sN)", "nul", path);
    } else {
        Py_INCREF(Py_None);
        result = Py_None;
    }
    free_scanner(s);
done:
    PyBuffer_Release(&view);
    return result;
}

/* ---- releasing a file mapping's pages while it is parsed ---- */

#define RELEASE_EVERY_NS 2000000L /* 2 ms: msgspec reads a few MiB in that time */
#define RELEASER "service.ingest._body.releaser"

typedef struct {
    Py_buffer view;            /* held: the mapping cannot be closed under the thread */
    unsigned char *start;      /* the whole pages of the buffer */
    size_t len;
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t wake;
    int stop;                  /* under lock */
    int running;               /* the thread was started and not yet joined */
    int finished;              /* the buffer and the lock were let go */
} Releaser;

static void *release_loop(void *arg) {
    Releaser *r = arg;
    pthread_mutex_lock(&r->lock);
    while (!r->stop) {
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_nsec += RELEASE_EVERY_NS;
        if (until.tv_nsec >= 1000000000L) {
            until.tv_sec += 1;
            until.tv_nsec -= 1000000000L;
        }
        int rc = pthread_cond_timedwait(&r->wake, &r->lock, &until);
        if (r->stop) break;
        if (rc == ETIMEDOUT) {
            pthread_mutex_unlock(&r->lock);
            madvise(r->start, r->len, MADV_DONTNEED);
            pthread_mutex_lock(&r->lock);
        }
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* Stops and joins the thread (without the GIL, which the thread never takes). */
static void releaser_finish(Releaser *r) {
    if (r->finished) return;
    if (r->running) {
        pthread_mutex_lock(&r->lock);
        r->stop = 1;
        pthread_cond_signal(&r->wake);
        pthread_mutex_unlock(&r->lock);
        Py_BEGIN_ALLOW_THREADS
        pthread_join(r->thread, NULL);
        Py_END_ALLOW_THREADS
        r->running = 0;
    }
    r->finished = 1;
    pthread_mutex_destroy(&r->lock);
    pthread_cond_destroy(&r->wake);
    PyBuffer_Release(&r->view);
}

static void releaser_destroy(PyObject *capsule) {
    Releaser *r = PyCapsule_GetPointer(capsule, RELEASER);
    if (!r) return;
    releaser_finish(r);
    free(r);
}

static PyObject *release_start(PyObject *self, PyObject *arg) {
    Releaser *r = calloc(1, sizeof(Releaser));
    if (!r) return PyErr_NoMemory();
    if (PyObject_GetBuffer(arg, &r->view, PyBUF_SIMPLE)) {
        free(r);
        return NULL;
    }
    uintptr_t page = (uintptr_t)sysconf(_SC_PAGESIZE);
    uintptr_t lo = ((uintptr_t)r->view.buf + page - 1) & ~(page - 1);
    uintptr_t hi = ((uintptr_t)r->view.buf + (uintptr_t)r->view.len) & ~(page - 1);
    r->start = (unsigned char *)lo;
    r->len = hi > lo ? (size_t)(hi - lo) : 0;
    pthread_mutex_init(&r->lock, NULL);
    pthread_cond_init(&r->wake, NULL);
    PyObject *capsule = PyCapsule_New(r, RELEASER, releaser_destroy);
    if (!capsule) {
        pthread_mutex_destroy(&r->lock);
        pthread_cond_destroy(&r->wake);
        PyBuffer_Release(&r->view);
        free(r);
        return NULL;
    }
    if (r->len == 0) return capsule; /* under a page: nothing to drop, no thread */
    int rc = pthread_create(&r->thread, NULL, release_loop, r);
    if (rc) {
        Py_DECREF(capsule); /* the destructor releases the buffer (not running) */
        errno = rc;
        return PyErr_SetFromErrno(PyExc_OSError);
    }
    r->running = 1;
    return capsule;
}

static PyObject *release_stop(PyObject *self, PyObject *capsule) {
    Releaser *r = PyCapsule_GetPointer(capsule, RELEASER);
    if (!r) return NULL;
    releaser_finish(r);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"release_start", release_start, METH_O,
     "release_start(file_mapping) -> handle: a thread drops the mapping's resident pages "
     "every 2 ms until release_stop(handle). Only for a read-only mapping of a file."},
    {"release_stop", release_stop, METH_O,
     "release_stop(handle): stops the thread release_start started and lets the buffer go."},
    {"first_problem", first_problem, METH_O,
     "first_problem(buffer) -> None, ('duplicate', path) for the first key that a JSON text "
     "repeats within one object, ('too_many_keys', path) for an object past the bounds on "
     "keys held at once, else ('nul', path) for the first string (key or value) "
     "spelling \\u0000; a path is a list of keys and indices. ValueError when the text is "
     "not JSON."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_body", "Reading request bodies at C speed: repeated keys, NUL, page release.", -1, methods,
};

PyMODINIT_FUNC PyInit__body(void) { return PyModule_Create(&module); }
