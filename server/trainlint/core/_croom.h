/* Room ahead in an array.array (the layout check and the reserve), shared by _carray.c, which hands it to
 * core/model.py's Series, and _cstdout.c, which appends its points to a series' arrays itself: one copy of the code.
 *
 * Why: every reader hands its points to a series a chunk at a time, and CPython's array grows by 1/16 of its size
 * when an extend does not fit. A series that ends with N points is then copied about 17 N items' worth on its way
 * there: glibc's realloc moves it, as the series' arrays sit on the heap (each freed 4 MB chunk string raises
 * glibc's mmap threshold past them). Under `perf record` that copy was 10-12% of the compiled Coqui and CSV reads
 * of their 100 MB logs (`array_resize` -> `_int_realloc` -> memcpy). Doubled here when it grows, a series is
 * copied at most N items' worth.
 *
 * The array module has no C API to reserve room, so `room_reserve` writes the two fields array_resize reads
 * (`ob_item`, `allocated`). Their places are checked once, at import, on a real array against what the array
 * itself reports through public interfaces: its buffer's address, its `__sizeof__` (the type's size plus its
 * allocated items), its buffer exports counted while one is held, and the struct's size as the type's. Any
 * difference (another CPython's layout) and nothing is reserved: the arrays then grow as before, and the points
 * are the same either way (array_resize keeps the room: it reallocates only when the room runs out, or when the
 * array shrinks by 16 items or more).
 */
#ifndef TRAINLINT_CROOM_H
#define TRAINLINT_CROOM_H

#include <Python.h>

/* CPython's arrayobject (Modules/arraymodule.c, the same from 3.0 to 3.13): only checked, never assumed. */
typedef struct {
    PyObject_VAR_HEAD
    char *ob_item;
    Py_ssize_t allocated;
    const void *ob_descr;
    PyObject *weakreflist;
    Py_ssize_t ob_exports;
} RoomLayout;

static PyTypeObject *ROOM_ARRAY = NULL;  /* array.array: only that exact type is given room */
static const char *ROOM_REFUSED = "not checked yet";  /* why nothing is reserved; NULL when the layout matched */

/* The layout above is this CPython's, as far as the array tells through its public interfaces. */
static const char *room_check(void) {
#ifdef Py_GIL_DISABLED
    return "a free-threaded CPython: another thread may be moving the array's items";
#endif
    if ((size_t)ROOM_ARRAY->tp_basicsize != sizeof(RoomLayout)) return "array.array's size is not the layout's";
    PyObject *a = PyObject_CallFunction((PyObject *)ROOM_ARRAY, "s(ddd)", "d", 1.0, 2.0, 3.0);
    if (a == NULL) return "no test array";
    RoomLayout *x = (RoomLayout *)a;
    const char *why = NULL;
    Py_buffer view;
    PyObject *size = NULL;
    if (Py_SIZE(a) != 3 || x->ob_exports != 0) {
        why = "the test array's length or exports are not where the layout says";
    } else if (PyObject_GetBuffer(a, &view, PyBUF_SIMPLE) != 0) {
        why = "the test array gave no buffer";
    } else {
        if (view.buf != (void *)x->ob_item || view.len != 24 || x->ob_exports != 1)
            why = "the test array's items or exports are not where the layout says";
        PyBuffer_Release(&view);
        if (why == NULL && x->ob_exports != 0) why = "a released buffer left the exports count as it was";
    }
    if (why == NULL) {
        size = PyObject_CallMethod(a, "__sizeof__", NULL);
        if (size == NULL || PyLong_AsSsize_t(size) != ROOM_ARRAY->tp_basicsize + x->allocated * 8)
            why = "the test array's allocated count is not where the layout says";
    }
    Py_XDECREF(size);
    Py_DECREF(a);
    PyErr_Clear();
    return why;
}

/* At the module's import: the array type and the layout check. -1 (an exception set) only when array is not there. */
static int room_init(void) {
    if (ROOM_ARRAY != NULL) return 0;
    PyObject *array = PyImport_ImportModule("array");
    if (array == NULL) return -1;
    ROOM_ARRAY = (PyTypeObject *)PyObject_GetAttrString(array, "array");
    Py_DECREF(array);
    if (ROOM_ARRAY == NULL) return -1;
    ROOM_REFUSED = room_check();
    return 0;
}

/* Room for `want` items in `a` (doubled when it grows), its items and length unchanged. 0 when done, -1 when not:
 * the layout did not match, not an exact array.array, a buffer of it is exported (its items must not move), or the
 * memory is not there. Never an exception: the append that follows grows the array as it would have, or fails as
 * it would. The item size is the array's own (asked only when it grows): a size from the caller that was not the
 * array's would make the room past the memory. */
static int room_reserve(PyObject *a, Py_ssize_t want) {
    if (ROOM_REFUSED != NULL || Py_TYPE(a) != ROOM_ARRAY) return -1;
    RoomLayout *x = (RoomLayout *)a;
    if (want <= x->allocated) return 0;
    if (x->ob_exports > 0) return -1;
    PyObject *item = PyObject_GetAttrString(a, "itemsize");
    Py_ssize_t size = item == NULL ? -1 : PyLong_AsSsize_t(item);
    Py_XDECREF(item);
    if (size <= 0) {
        PyErr_Clear();
        return -1;
    }
    Py_ssize_t cap = x->allocated > PY_SSIZE_T_MAX / 2 ? PY_SSIZE_T_MAX : 2 * x->allocated;
    if (cap < want) cap = want;
    if (cap > PY_SSIZE_T_MAX / size) return -1;
    char *items = PyMem_Realloc(x->ob_item, (size_t)(cap * size));
    if (items == NULL) return -1;
    x->ob_item = items;
    x->allocated = cap;
    return 0;
}

#endif
