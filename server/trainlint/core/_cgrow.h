/* The growable byte buffers the compiled scanners (_cscan.c, _ctext.c include it) collect a column in, handed to
 * its array.array in one call, and the check that an object is such an array (_cstats.c, _cstdout.c): one copy of
 * the code. */
#ifndef TRAINLINT_CGROW_H
#define TRAINLINT_CGROW_H

#include <Python.h>
#include <string.h>

/* A growable byte buffer: one column's doubles or line numbers, appended to its array.array at the end. */
typedef struct {
    char *data;
    size_t len, cap;
} Grow;

static inline int grow_put(Grow *g, const void *item, size_t size) {
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
static inline int grow_flush(Grow *g, PyObject *arr) {
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

/* The object is an array.array of the type code ``code`` (``d``: double, ``q``: long long, ``I``: unsigned int) and
 * item size ``size``: what a column is handed to, or read from, in one piece. */
static inline int array_of(PyObject *arr, const char *code, Py_ssize_t size) {
    Py_buffer view;
    if (PyObject_GetBuffer(arr, &view, PyBUF_FORMAT | PyBUF_ND) < 0) {
        PyErr_Clear();
        return 0;
    }
    int ok = view.itemsize == size && view.format != NULL && strcmp(view.format, code) == 0;
    PyBuffer_Release(&view);
    return ok;
}

#endif
