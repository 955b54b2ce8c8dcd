/* Line breaks as the LSP counts them (\n, \r\n, a lone \r), counted in one pass over a chunk's bytes.
 *
 * Every line-based reader's chunk is counted at least twice (the line index every 64 KB, then the chunk's own
 * count), and core/lines.py's count_breaks_bytes makes up to four passes of bytes.count / find, each at about
 * 2 GB/s on this machine: on a 100 MB CSV with Windows line ends that was 0.33 s of a 1.47 s read, more than the
 * bare scan of the file (the floor). Here one pass counts the \n and the \r that no \n follows, which is the same
 * number by definition: count("\n") + count("\r") - count("\r\n") within [start, end).
 *
 * Built by setup.py as an optional extension like the scanners; core/lines.py falls back to its bytes.count
 * passes without it (TRAINLINT_PURE=1 forces that), and tests/test_compiled_scanner.py holds both to the same
 * counts on random and real data.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

/* The breaks in p[0:n]: a \r at n-1 is lone (the byte after the range is not looked at, as bytes.count does not). */
static Py_ssize_t count_range(const unsigned char *p, Py_ssize_t n) {
    Py_ssize_t lf = 0;
    for (Py_ssize_t i = 0; i < n; i++) lf += p[i] == '\n';  /* vectorized by the compiler */
    if (n == 0 || memchr(p, '\r', (size_t)n) == NULL) return lf;
    Py_ssize_t lone = 0;
    for (Py_ssize_t i = 0; i + 1 < n; i++) lone += (p[i] == '\r') & (p[i + 1] != '\n');
    return lf + lone + (p[n - 1] == '\r');
}

/* count_breaks(data, start=0, end=None) -> int: core/lines.py's count_breaks_bytes, with slice bounds as bytes
 * slicing clips them (negative from the end). */
static PyObject *count_breaks(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t start = 0, end = PY_SSIZE_T_MAX;
    PyObject *end_obj = Py_None;
    if (!PyArg_ParseTuple(args, "y*|nO", &view, &start, &end_obj)) return NULL;
    if (end_obj != Py_None) {
        end = PyNumber_AsSsize_t(end_obj, PyExc_OverflowError);
        if (end == -1 && PyErr_Occurred()) {
            PyBuffer_Release(&view);
            return NULL;
        }
    }
    Py_ssize_t len = view.len;
    if (start < 0) start = start + len < 0 ? 0 : start + len;
    if (end < 0) end = end + len < 0 ? 0 : end + len;
    if (end > len) end = len;
    Py_ssize_t n = start < end ? count_range((const unsigned char *)view.buf + start, end - start) : 0;
    PyBuffer_Release(&view);
    return PyLong_FromSsize_t(n);
}

static PyMethodDef METHODS[] = {
    {"count_breaks", count_breaks, METH_VARARGS, "Line breaks (\\n, \\r\\n, lone \\r) in data[start:end], one pass."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_clines", "trainlint's compiled line counter.", -1,
                                    METHODS};

PyMODINIT_FUNC PyInit__clines(void) { return PyModule_Create(&MODULE); }
