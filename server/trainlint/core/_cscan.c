/* trainlint's compiled scanner: the hot loops of the readers, with the readers' own Python as the fallback.
 *
 * Each function here does the part of a reader's loop that dominated its profile and hands back exactly what the
 * Python loop would have built (the same lists of floats and ints). Anything it is not sure to read as the Python
 * path does (a quote in a CSV line, a cell float() would need to strip, an event field it does not know) is left
 * to the Python path: the functions stop there and say where, so both paths give identical series by
 * construction (tests/test_compiled_scanner.py holds them to it on every real log).
 *
 * Built by setup.py as an optional extension: without a compiler, or with TRAINLINT_PURE=1, the package is pure
 * Python and trainlint.core.accel says why the fallback is in use.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <float.h>
#include <limits.h>
#include <string.h>

/* ---- numbers as float() reads them -------------------------------------------------------------------------- */

/* The characters of a cell that float() reads without stripping or translating anything: digits, sign, point,
 * exponent, and the letters of nan / inf / infinity. A cell of other bytes (spaces, underscores, non-ASCII digits)
 * goes to the Python path. */
static unsigned char NUMCHAR[256];

static void init_numchar(void) {
    const char *ok = "0123456789+-.eEnNaAiIfFtTyY";
    for (const char *p = ok; *p; p++) NUMCHAR[(unsigned char)*p] = 1;
}

/* Clinger's fast path: a decimal of at most 2^53 as its digits and a power of ten of at most 22 are both exact
 * doubles, so one multiplication or division rounds once, correctly: the double float() (a correctly rounded
 * parser) returns. 1: *out set; 0: not this case (more digits, a larger exponent, nan/inf: PyOS_string_to_double
 * decides). Most logged numbers (4 to 16 significant digits) are this case, at a tenth of the general parser's
 * cost. Only where doubles are evaluated as doubles (not x87's extended precision). */
static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int clinger(const char *p, const char *end, double *out) {
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    int neg = 0;
    if (p < end && (*p == '+' || *p == '-')) neg = *p++ == '-';
    uint64_t w = 0;
    int digits = 0, any = 0, frac = 0, point = 0;
    for (; p < end; p++) {
        if (*p >= '0' && *p <= '9') {
            any = 1;
            if (w == 0 && *p == '0') {  /* a leading zero: no significant digit */
                frac += point;
                continue;
            }
            if (++digits > 16) return 0;
            w = w * 10 + (uint64_t)(*p - '0');
            frac += point;
        } else if (*p == '.' && !point) {
            point = 1;
        } else {
            break;
        }
    }
    if (!any) return 0;
    int e = 0;
    if (p < end && (*p == 'e' || *p == 'E')) {
        p++;
        int eneg = 0, edigits = 0;
        if (p < end && (*p == '+' || *p == '-')) eneg = *p++ == '-';
        for (; p < end && *p >= '0' && *p <= '9'; p++) {
            if (++edigits > 4) return 0;
            e = e * 10 + (*p - '0');
        }
        if (!edigits) return 0;
        if (eneg) e = -e;
    }
    if (p != end || w > ((uint64_t)1 << 53)) return 0;
    e -= frac;
    double x = (double)w;
    if (w == 0) {
        x = 0.0;
    } else if (e < 0) {
        if (e < -22) return 0;
        x /= POW10[-e];
    } else {
        if (e > 22) return 0;
        x *= POW10[e];
    }
    *out = neg ? -x : x;
    return 1;
#else
    (void)p;
    (void)end;
    (void)out;
    return 0;
#endif
}

/* 1 and *out set: the cell is a number float() reads as *out; 0: the Python path decides (no error set). */
static int strict_number(const char *p, Py_ssize_t n, double *out) {
    if (n <= 0 || n > 400) return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!NUMCHAR[(unsigned char)p[i]]) return 0;
    if (clinger(p, p + n, out)) return 1;
    char *end = NULL;
    double x = PyOS_string_to_double(p, &end, NULL);  /* float()'s own parser, after its whitespace strip */
    if (x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (end != p + n) return 0;
    *out = x;
    return 1;
}

/* ---- CSV rows ----------------------------------------------------------------------------------------------- */

#define MAX_CELLS 4096
#define MAX_LINE 100000  /* under csv.field_size_limit()'s 131,072: a longer line goes to csv.reader */

/* Python's str.strip() whitespace among ASCII bytes (a line with another byte is not blank, or goes to Python). */
static int is_py_space(unsigned char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* A row's cells as (offset, length) pairs; -1: the Python path reads this line, 0: csv.reader gives no row
 * to count (an empty line, or one blank cell), else the number of cells. */
static Py_ssize_t split_row(const char *s, Py_ssize_t n, Py_ssize_t *starts, Py_ssize_t *lens) {
    if (n > MAX_LINE) return -1;
    if (n == 0) return 0;
    Py_ssize_t cells = 0, begin = 0;
    int ascii_blank = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\0' || c == '\r' || c == '\n') return -1;
        if (c >= 0x80) ascii_blank = -1;
        else if (ascii_blank == 1 && !is_py_space(c)) ascii_blank = 0;
        if (c == ',') {
            if (cells >= MAX_CELLS - 1) return -1;
            starts[cells] = begin;
            lens[cells++] = i - begin;
            begin = i + 1;
        }
    }
    starts[cells] = begin;
    lens[cells++] = n - begin;
    if (cells == 1) {
        if (ascii_blank == 1) return 0;
        if (ascii_blank == -1) return -1;  /* str.strip() knows non-ASCII spaces: let Python decide */
    }
    return cells;
}

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

/* arr.frombytes(g's bytes): the array module has no C API, and this is one call per column and scan. */
static int grow_flush(Grow *g, PyObject *arr) {
    if (g->len == 0) return 0;
    PyObject *r = PyObject_CallMethod(arr, "frombytes", "y#", g->data, (Py_ssize_t)g->len);
    g->len = 0;
    if (r == NULL) return -1;
    Py_DECREF(r);
    return 0;
}

/* Append one row's parsed values to their columns' buffers (steps, values, lines, walls). */
static int commit_row(Grow *grows, Py_ssize_t nb, const char *have, const double *vals, double step, double wall,
                      unsigned int line) {
    for (Py_ssize_t k = 0; k < nb; k++) {
        if (!have[k]) continue;
        Grow *g = grows + 4 * k;
        if (grow_put(g, &step, sizeof step) < 0 || grow_put(g + 1, &vals[k], sizeof(double)) < 0 ||
            grow_put(g + 2, &line, sizeof line) < 0 || grow_put(g + 3, &wall, sizeof wall) < 0)
            return -1;
    }
    return 0;
}

/* csv_rows(lines, start, first_line, step_col, wall_col, rows, bufs) -> (next, rows)
 *
 * CsvReader.scan's row loop for the rows csv.reader splits at every comma (no quote, NUL or line break in the line)
 * and whose cells float() reads as they are. Stops at the first line it leaves to the Python path (next < len(lines))
 * or at the end. bufs[k] is None (no series) or the tuple (steps, values, lines, walls, name) of column k, the
 * first four array.array objects of typecodes d, d, I, d. */
static PyObject *csv_rows(PyObject *self, PyObject *args) {
    PyObject *lines, *bufs;
    Py_ssize_t start, step_col, wall_col, rows;
    long long first_line;
    if (!PyArg_ParseTuple(args, "O!nLnnnO!", &PyList_Type, &lines, &start, &first_line, &step_col, &wall_col, &rows,
                          &PyList_Type, &bufs))
        return NULL;
    Py_ssize_t nb = PyList_GET_SIZE(bufs), n = PyList_GET_SIZE(lines), j = start;
    Py_ssize_t *starts = PyMem_Malloc(sizeof(Py_ssize_t) * MAX_CELLS * 2);
    double *vals = PyMem_Malloc(sizeof(double) * (nb + 1));
    char *have = PyMem_Malloc(nb + 1);
    Grow *grows = PyMem_Calloc(4 * nb + 1, sizeof(Grow));
    if (!starts || !vals || !have || !grows) {
        PyMem_Free(starts);
        PyMem_Free(vals);
        PyMem_Free(have);
        PyMem_Free(grows);
        return PyErr_NoMemory();
    }
    Py_ssize_t *lens = starts + MAX_CELLS;
    int failed = 0;
    for (; j < n; j++) {
        PyObject *line = PyList_GET_ITEM(lines, j);
        if (!PyUnicode_Check(line)) break;
        Py_ssize_t len;
        const char *s = PyUnicode_AsUTF8AndSize(line, &len);
        if (s == NULL) {
            PyErr_Clear();  /* a lone surrogate: csv.reader decides */
            break;
        }
        Py_ssize_t cells = split_row(s, len, starts, lens);
        if (cells < 0) break;
        if (cells == 0) continue;
        double step = (double)rows, wall = Py_NAN;
        if (step_col >= 0 && step_col < cells) {
            if (lens[step_col] == 0) {  /* float('') raises: the row counts, its cells are skipped */
                rows++;
                continue;
            }
            if (!strict_number(s + starts[step_col], lens[step_col], &step)) break;
        }
        if (wall_col >= 0 && wall_col < cells && lens[wall_col] > 0 &&
            !strict_number(s + starts[wall_col], lens[wall_col], &wall))
            break;
        Py_ssize_t k, upto = cells < nb ? cells : nb;
        memset(have, 0, nb);
        for (k = 0; k < upto; k++) {
            if (lens[k] == 0 || PyList_GET_ITEM(bufs, k) == Py_None) continue;
            if (!strict_number(s + starts[k], lens[k], &vals[k])) break;
            have[k] = 1;
        }
        if (k < upto) break;  /* a cell float() refuses or would strip: _odd_cell's, in Python */
        if (first_line + j < 0 || first_line + j > UINT_MAX) break;  /* array('I') refuses it: Python raises */
        rows++;
        if (commit_row(grows, nb, have, vals, step, wall, (unsigned int)(first_line + j)) < 0) {
            failed = 1;
            PyErr_NoMemory();
            break;
        }
    }
    for (Py_ssize_t k = 0; k < nb; k++) {
        PyObject *buf = PyList_GET_ITEM(bufs, k);
        for (int f = 0; f < 4; f++) {
            if (!failed && buf != Py_None && grow_flush(grows + 4 * k + f, PyTuple_GET_ITEM(buf, f)) < 0) failed = 1;
            PyMem_Free(grows[4 * k + f].data);
        }
    }
    PyMem_Free(starts);
    PyMem_Free(vals);
    PyMem_Free(have);
    PyMem_Free(grows);
    if (failed) return NULL;
    return Py_BuildValue("nn", j, rows);
}

/* ---- module ------------------------------------------------------------------------------------------------- */

static PyMethodDef METHODS[] = {
    {"csv_rows", csv_rows, METH_VARARGS, "CsvReader.scan's loop over plain rows; stops where Python must read."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_cscan", "trainlint's compiled scanner.", -1, METHODS};

PyMODINIT_FUNC PyInit__cscan(void) {
    init_numchar();
    return PyModule_Create(&MODULE);
}
