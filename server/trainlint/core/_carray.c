/* Room ahead in a series' arrays for core/model.py (`Series.extend`): the reserve of _croom.h, which says why.
 *
 * Built by setup.py as an optional extension like the scanners; core/model.py does without it (TRAINLINT_PURE=1
 * too: the arrays then grow as array.array grows them, to the same points), and tests/test_compiled_array.py
 * checks the room, the points and the refusals.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "_croom.h"

/* reserve(array, n) -> bool: room for n items at least (doubled when it grows), the array's items and length as
 * they were. False, and nothing done, when it cannot (room_reserve). */
static PyObject *reserve(PyObject *self, PyObject *args) {
    PyObject *a;
    Py_ssize_t want;
    if (!PyArg_ParseTuple(args, "On", &a, &want)) return NULL;
    return PyBool_FromLong(room_reserve(a, want) == 0);
}

/* room(array) -> the items it has room for (the tests' view of `allocated`), or -1 when nothing is reserved. */
static PyObject *room(PyObject *self, PyObject *a) {
    if (ROOM_REFUSED != NULL || Py_TYPE(a) != ROOM_ARRAY) return PyLong_FromSsize_t(-1);
    return PyLong_FromSsize_t(((RoomLayout *)a)->allocated);
}

static PyMethodDef METHODS[] = {
    {"reserve", reserve, METH_VARARGS, "reserve(array, n) -> bool: room for n items, doubled when it grows."},
    {"room", room, METH_O, "room(array) -> the items the array has room for; -1 when nothing is reserved."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_carray",
                                    "trainlint's room ahead in a series' arrays.", -1, METHODS};

PyMODINIT_FUNC PyInit__carray(void) {
    if (room_init() < 0) return NULL;
    PyObject *m = PyModule_Create(&MODULE);
    if (m == NULL) return NULL;
    /* why nothing is reserved ("" when it is): accel.py falls back with it */
    if (PyModule_AddStringConstant(m, "REFUSED", ROOM_REFUSED ? ROOM_REFUSED : "") != 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
