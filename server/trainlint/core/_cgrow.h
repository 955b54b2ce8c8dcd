/* The growable byte buffers the compiled scanners (_cscan.c, _ctext.c include it) collect a column in, handed to
 * its array.array in one call: one copy of the code. */
#ifndef TRAINLINT_CGROW_H
#define TRAINLINT_CGROW_H

#include <Python.h>
#include <string.h>

/* A growable byte buffer: one column's doubles or line numbers, appended to its array.array at the end. */
typedef struct {
    char *data;
    size_t len, cap;
} Grow;

static int grow_put(Grow *g, const void *item, size_t size) {
    if (g->len + size > g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 4096;
        char *d = PyMem_Realloc(g->data, cap);
        if (d == NULL) return -1;
        g->data = d;
        g->cap = cap;
    }
    memcpy(g->data + g->len, item, size);
    g->len += size;
    return 0;
}

/* arr.frombytes(g's bytes): the array module has no C API, and this is one call per column and scan. Handed as a
 * memoryview of the buffer, not a bytes copy of it ("y#"): that copy was 1-2% of the compiled Coqui and CSV reads. */
static int grow_flush(Grow *g, PyObject *arr) {
    if (g->len == 0) return 0;
    PyObject *view = PyMemoryView_FromMemory(g->data, (Py_ssize_t)g->len, PyBUF_READ);
    g->len = 0;
    if (view == NULL) return -1;
    PyObject *r = PyObject_CallMethod(arr, "frombytes", "O", view);
    Py_DECREF(view);
    if (r == NULL) return -1;
    Py_DECREF(r);
    return 0;
}

#endif
