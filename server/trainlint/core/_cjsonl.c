/* trainlint's compiled JSONL scanner: JsonlReader's json.loads of a batch of lines, as columns.
 *
 * The common line of a JSON-lines training log is a flat object of string keys and numbers, strings or null.
 * For a batch of such lines, columns() hands back per key what the reader's column loop would read from the
 * objects json.loads builds: the kind of each row's value (absent, int, float, null, string, true, false) and the
 * numbers as doubles, without building a dict per line. Any line it is not sure to read as json.loads does (an
 * escape in a string, a non-ASCII character, a nested value, a duplicate key, a long integer, anything json.loads
 * would refuse) makes it return None for the whole batch, and the reader decodes that
 * batch with json.loads as it always did: both paths give identical series (tests/test_compiled_scanner.py).
 * columns_text() reads the lines where they are in the chunk's text (splitting it into a str a line was a tenth of
 * the read), and keeps no str for a key the reader never reads a value of (its ``skip``: elapsed times, ETAs).
 *
 * Numbers are read as json.loads reads them: an integer literal is an int (so "-0" is 0), a literal with a point
 * or an exponent is float() of its text (json's scanner calls PyFloat_FromString), bit for bit; the constants NaN,
 * Infinity and -Infinity are float('nan'), float('inf') and float('-inf').
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

enum { K_ABSENT = 0, K_INT = 1, K_FLOAT = 2, K_NULL = 3, K_STR = 4, K_TRUE = 5, K_FALSE = 6 };

#define MAX_KEYS 1024     /* more distinct keys in a batch: the reader's sparse path, from json.loads's dicts */
#define MAX_INT_DIGITS 15 /* an int of at most 15 digits is an exact double, and int(double) gives it back */

#include "_cfloat.h"

/* float() of a JSON number literal's text p[0:n] (already checked against JSON's grammar): 0 and *out set, or -1
 * (the batch goes to json.loads). */
static int float_of(const char *p, Py_ssize_t n, double *out) {
    if (fast_double(p, p + n, out)) return 0;  /* 17-19 digits too (LLaMA-Factory's learning rates) */
    char buf[512];
    if (n >= (Py_ssize_t)sizeof buf) return -1;
    memcpy(buf, p, (size_t)n);
    buf[n] = '\0';
    char *end = NULL;
    double x = PyOS_string_to_double(buf, &end, NULL);
    if (x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return -1;
    }
    if (end != buf + n) return -1;
    *out = x;
    return 0;
}

/* One key's column over the batch: a kind per row, a double per row (NaN where the row holds no number), and the
 * Python objects of its string and boolean rows, in row order. */
typedef struct {
    const char *name; /* the key's characters, in the line that first held it (alive during the call) */
    Py_ssize_t len;
    char *kinds;
    double *values;
    PyObject *others;  /* list, created on the first string or boolean */
    PyObject *key;     /* the key as a str, made when the column is */
    int skip;          /* a key the reader never reads a value of (``skip``): its strings and booleans not kept */
    Py_ssize_t seen;   /* the last row that held the key: a second time in one row is a duplicate key */
} Col;

typedef struct {
    Col *cols;
    Py_ssize_t ncols, rows;
    Py_ssize_t *order; /* the key index at each position of the previous row: the next row's first guess */
    Py_ssize_t norder;
    PyObject *skip;    /* a set of keys whose strings and booleans are not kept, or NULL */
} Table;

static void table_free(Table *t) {
    for (Py_ssize_t k = 0; k < t->ncols; k++) {
        PyMem_Free(t->cols[k].kinds);
        PyMem_Free(t->cols[k].values);
        Py_XDECREF(t->cols[k].others);
        Py_XDECREF(t->cols[k].key);
    }
    PyMem_Free(t->cols);
    PyMem_Free(t->order);
}

/* The column of key s[0:n], created on first sight; -1: too many keys or no memory (-2, error set). */
static Py_ssize_t col_of(Table *t, const char *s, Py_ssize_t n, Py_ssize_t pos) {
    if (pos < t->norder) {  /* the key at this position in the previous row: most lines have the same keys */
        Col *c = &t->cols[t->order[pos]];
        if (c->len == n && (n == 0 || (c->name[0] == s[0] && memcmp(c->name, s, (size_t)n) == 0)))
            return t->order[pos];
    }
    for (Py_ssize_t k = 0; k < t->ncols; k++)
        if (t->cols[k].len == n && memcmp(t->cols[k].name, s, (size_t)n) == 0) return k;
    if (t->ncols >= MAX_KEYS) return -1;
    Col *c = &t->cols[t->ncols];
    memset(c, 0, sizeof *c);
    c->name = s;
    c->len = n;
    c->seen = -1;
    c->kinds = PyMem_Calloc((size_t)t->rows, 1);
    c->values = PyMem_Malloc((size_t)t->rows * sizeof(double));
    c->key = PyUnicode_FromStringAndSize(s, n);
    c->skip = c->key == NULL || t->skip == NULL ? 0 : PySet_Contains(t->skip, c->key);
    if (c->kinds == NULL || c->values == NULL || c->key == NULL || c->skip < 0) {
        PyMem_Free(c->kinds);
        PyMem_Free(c->values);
        Py_XDECREF(c->key);
        if (!PyErr_Occurred()) PyErr_NoMemory();
        return -2;
    }
    for (Py_ssize_t i = 0; i < t->rows; i++) c->values[i] = Py_NAN;
    return t->ncols++;
}

static const char *skip_ws(const char *p, const char *end) {
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n' || *p == '\r')) p++;
    return p;
}

/* A string's body from p (after its opening quote) to the closing quote, which *close is set to; NULL: an escape,
 * a control character or no closing quote (json.loads decides). */
static const char *string_end(const char *p, const char *end) {
    for (; p < end; p++) {
        unsigned char c = (unsigned char)*p;
        if (c == '"') return p;
        if (c == '\\' || c < 0x20) return NULL;
    }
    return NULL;
}

/* A JSON number literal from p: its end and whether it is an int, or NULL (not JSON's grammar: json.loads). */
static const char *number_end(const char *p, const char *end, int *is_int) {
    const char *q = p;
    if (q < end && *q == '-') q++;
    if (q >= end) return NULL;
    if (*q == '0') {
        q++;
    } else if (*q >= '1' && *q <= '9') {
        while (q < end && *q >= '0' && *q <= '9') q++;
    } else {
        return NULL;
    }
    *is_int = 1;
    if (q < end && *q == '.') {
        q++;
        if (q >= end || *q < '0' || *q > '9') return NULL;
        while (q < end && *q >= '0' && *q <= '9') q++;
        *is_int = 0;
    }
    if (q < end && (*q == 'e' || *q == 'E')) {
        q++;
        if (q < end && (*q == '+' || *q == '-')) q++;
        if (q >= end || *q < '0' || *q > '9') return NULL;
        while (q < end && *q >= '0' && *q <= '9') q++;
        *is_int = 0;
    }
    return q;
}

/* One value at p into column c, row r; returns its end, or NULL (json.loads decides; -> *err if an error is set). */
static const char *value_at(const char *p, const char *end, Col *c, Py_ssize_t r, int *err) {
    if (*p == '"') {
        const char *q = string_end(p + 1, end);
        if (q == NULL) return NULL;
        c->kinds[r] = K_STR;
        if (c->skip) return q + 1;
        PyObject *s = PyUnicode_FromStringAndSize(p + 1, q - p - 1);
        if (s == NULL || (c->others == NULL && (c->others = PyList_New(0)) == NULL) ||
            PyList_Append(c->others, s) < 0) {
            Py_XDECREF(s);
            *err = 1;
            return NULL;
        }
        Py_DECREF(s);
        return q + 1;
    }
    if (*p == 'n') {
        if (end - p < 4 || memcmp(p, "null", 4) != 0) return NULL;
        c->kinds[r] = K_NULL;
        return p + 4;
    }
    if (*p == 't' || *p == 'f') {
        int truth = *p == 't';
        if (truth ? end - p < 4 || memcmp(p, "true", 4) != 0 : end - p < 5 || memcmp(p, "false", 5) != 0) return NULL;
        if (!c->skip && ((c->others == NULL && (c->others = PyList_New(0)) == NULL) ||
                         PyList_Append(c->others, truth ? Py_True : Py_False) < 0)) {
            *err = 1;
            return NULL;
        }
        c->kinds[r] = truth ? K_TRUE : K_FALSE;
        return p + (truth ? 4 : 5);
    }
    /* json.loads's constants (writers' allow_nan): NaN and the infinities, the floats float() gives for them. */
    if (*p == 'N' || *p == 'I' || (*p == '-' && end - p > 1 && p[1] == 'I')) {
        static const struct {
            const char *text;
            Py_ssize_t len;
            int sign;
        } CONSTANTS[] = {{"NaN", 3, 0}, {"Infinity", 8, 1}, {"-Infinity", 9, -1}};
        for (int k = 0; k < 3; k++) {
            if (end - p >= CONSTANTS[k].len && memcmp(p, CONSTANTS[k].text, (size_t)CONSTANTS[k].len) == 0) {
                c->values[r] = CONSTANTS[k].sign == 0 ? Py_NAN : CONSTANTS[k].sign * Py_HUGE_VAL;
                c->kinds[r] = K_FLOAT;
                return p + CONSTANTS[k].len;
            }
        }
        return NULL;
    }
    int is_int = 0;
    const char *q = number_end(p, end, &is_int);
    if (q == NULL) return NULL;
    if (is_int) {
        const char *d = p + (*p == '-');
        if (q - d > MAX_INT_DIGITS) return NULL;
        int64_t v = 0;
        for (; d < q; d++) v = v * 10 + (*d - '0');
        c->values[r] = (double)(*p == '-' ? -v : v);  /* an int: -0 is 0 */
        c->kinds[r] = K_INT;
    } else {
        if (float_of(p, q - p, &c->values[r]) < 0) return NULL;
        c->kinds[r] = K_FLOAT;
    }
    return q;
}

/* The key at this position in the previous row when the string at p (after its opening quote) is that key, closed
 * by a quote (its characters were checked when it was first seen: no escape, no control character, no quote); -1
 * otherwise. Most lines have the same keys in the same order: their keys need no scan for their end. */
static Py_ssize_t expected_key(Table *t, const char *p, const char *end, Py_ssize_t pos) {
    if (pos >= t->norder) return -1;
    Col *c = &t->cols[t->order[pos]];
    if (end - p <= c->len || p[c->len] != '"' || memcmp(c->name, p, (size_t)c->len) != 0) return -1;
    return t->order[pos];
}

/* Python's str.strip() whitespace among ASCII characters. */
static int is_py_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

/* Row r from the ASCII line s[0:n], stripped as str.strip() strips it: 0, 1 (json.loads decides) or -1 (error
 * set). */
static int parse_row(Table *t, const char *s, Py_ssize_t n, Py_ssize_t r) {
    const char *p = s, *end = s + n;
    while (p < end && is_py_space((unsigned char)*p)) p++;
    while (end > p && is_py_space((unsigned char)end[-1])) end--;
    if (p >= end || *p != '{') return 1;
    p = skip_ws(p + 1, end);
    if (p < end && *p == '}') return p + 1 == end ? 0 : 1;
    for (Py_ssize_t pos = 0;; pos++) {
        if (p >= end || *p != '"') return 1;
        Py_ssize_t k = expected_key(t, p + 1, end, pos);
        const char *q = k >= 0 ? p + 1 + t->cols[k].len : string_end(p + 1, end);
        if (q == NULL) return 1;
        if (k < 0) k = col_of(t, p + 1, q - p - 1, pos);
        if (k == -2) return -1;
        if (k < 0) return 1;
        Col *c = &t->cols[k];
        if (c->seen == r) return 1;  /* a duplicate key: json.loads keeps the last value at the first position */
        c->seen = r;
        if (pos >= t->norder) t->norder = pos + 1;
        t->order[pos] = k;
        p = skip_ws(q + 1, end);
        if (p >= end || *p != ':') return 1;
        p = skip_ws(p + 1, end);
        if (p >= end) return 1;
        int err = 0;
        p = value_at(p, end, c, r, &err);
        if (p == NULL) return err ? -1 : 1;
        p = skip_ws(p, end);
        if (p < end && *p == ',') {
            p = skip_ws(p + 1, end);
            continue;
        }
        return (p < end && *p == '}' && p + 1 == end) ? 0 : 1;
    }
}

/* The table as (keys, kinds, values, others): lists over the keys in the order they first appear. */
static PyObject *table_result(Table *t) {
    PyObject *keys = PyList_New(t->ncols), *kinds = PyList_New(t->ncols), *values = PyList_New(t->ncols),
             *others = PyList_New(t->ncols);
    if (keys == NULL || kinds == NULL || values == NULL || others == NULL) goto fail;
    for (Py_ssize_t k = 0; k < t->ncols; k++) {
        Col *c = &t->cols[k];
        PyObject *key = Py_NewRef(c->key);
        PyObject *kd = PyBytes_FromStringAndSize(c->kinds, t->rows);
        PyObject *vs = PyBytes_FromStringAndSize((const char *)c->values, t->rows * (Py_ssize_t)sizeof(double));
        PyObject *os = c->skip ? Py_NewRef(Py_None) : c->others ? c->others : PyList_New(0);
        if (!c->skip) c->others = NULL;
        if (key == NULL || kd == NULL || vs == NULL || os == NULL) {
            Py_XDECREF(key);
            Py_XDECREF(kd);
            Py_XDECREF(vs);
            Py_XDECREF(os);
            goto fail;
        }
        PyList_SET_ITEM(keys, k, key);
        PyList_SET_ITEM(kinds, k, kd);
        PyList_SET_ITEM(values, k, vs);
        PyList_SET_ITEM(others, k, os);
    }
    return Py_BuildValue("(NNNN)", keys, kinds, values, others);
fail:
    Py_XDECREF(keys);
    Py_XDECREF(kinds);
    Py_XDECREF(values);
    Py_XDECREF(others);
    return NULL;
}

/* A table for a batch of ``rows`` lines; -1 (error set) without memory. */
static int table_init(Table *t, Py_ssize_t rows, PyObject *skip) {
    memset(t, 0, sizeof *t);
    t->rows = rows;
    t->skip = skip == Py_None ? NULL : skip;
    t->cols = PyMem_Calloc(MAX_KEYS, sizeof(Col));
    t->order = PyMem_Calloc(MAX_KEYS, sizeof(Py_ssize_t));
    if (t->cols == NULL || t->order == NULL) {
        PyMem_Free(t->cols);
        PyMem_Free(t->order);
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

/* columns(raws, skip=None) -> (keys, kinds, values, others) | None
 *
 * raws: the batch's non-blank lines (stripped or not: the scanner strips an ASCII line as str.strip() does).
 * keys: the keys in the order they first appear (the first line's keys first, in its order); kinds[k]: bytes, one
 * K_* per line; values[k]: the lines' numbers as native doubles (NaN where the line holds no number); others[k]:
 * the str and bool values of the key, in line order, or None for a key in the set ``skip`` (the reader never reads
 * those values: no str is made for them). None: a line is not a plain flat object, the batch is json.loads's. */
static PyObject *columns(PyObject *self, PyObject *args) {
    PyObject *raws, *skip = Py_None;
    if (!PyArg_ParseTuple(args, "O!|O", &PyList_Type, &raws, &skip)) return NULL;
    if (skip != Py_None && !PyAnySet_Check(skip)) return PyErr_Format(PyExc_TypeError, "skip: a set or None");
    Table t;
    if (table_init(&t, PyList_GET_SIZE(raws), skip) < 0) return NULL;
    int rc = 0;
    for (Py_ssize_t r = 0; r < t.rows && rc == 0; r++) {
        PyObject *raw = PyList_GET_ITEM(raws, r);
        if (!PyUnicode_Check(raw) || PyUnicode_READY(raw) < 0 || !PyUnicode_IS_ASCII(raw)) {
            rc = PyErr_Occurred() ? -1 : 1;
            break;
        }
        rc = parse_row(&t, (const char *)PyUnicode_DATA(raw), PyUnicode_GET_LENGTH(raw), r);
    }
    PyObject *out = rc < 0 ? NULL : rc > 0 ? Py_NewRef(Py_None) : table_result(&t);
    table_free(&t);
    return out;
}

/* The number of lines in s[pos:n] up to ``most`` (a final break does not start a line) and, in *stop, where the
 * last of them ends (past its break). */
static Py_ssize_t count_lines(const char *s, Py_ssize_t pos, Py_ssize_t n, Py_ssize_t most, Py_ssize_t *stop) {
    Py_ssize_t rows = 0, i = pos;
    while (i < n && rows < most) {
        const char *nl = memchr(s + i, '\n', (size_t)(n - i));
        i = nl ? nl - s + 1 : n;
        rows++;
    }
    *stop = i;
    return rows;
}

/* columns_text(text, pos, line, most, skip) -> (end, lines, keys, kinds, values, others) | None
 *
 * columns() of the next ``most`` lines of ``text`` from ``pos`` (fewer at its end), read where they are, without
 * the reader splitting them into strs: the lines as split_lines() makes them and the reader strips them, when
 * ``text`` is ASCII and none of these lines holds a carriage return (a line break of its own) or is blank (the
 * reader drops it, and its line numbers are no longer a range). end: where the last line read ends (past its
 * break); lines: their numbers, ``line`` on, as native unsigned ints (array('I')). None: the reader splits the
 * text from ``pos`` and reads it as before (json.loads decides what columns() leaves). */
static PyObject *columns_text(PyObject *self, PyObject *args) {
    PyObject *text, *skip;
    Py_ssize_t pos, most;
    long long line;
    if (!PyArg_ParseTuple(args, "UnLnO", &text, &pos, &line, &most, &skip)) return NULL;
    if (skip != Py_None && !PyAnySet_Check(skip)) return PyErr_Format(PyExc_TypeError, "skip: a set or None");
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), stop;
    if (!PyUnicode_IS_ASCII(text) || pos < 0 || pos >= n || most <= 0 || line < 0) Py_RETURN_NONE;
    const char *s = (const char *)PyUnicode_DATA(text);
    Py_ssize_t rows = count_lines(s, pos, n, most, &stop);
    if (line + rows - 1 > (long long)UINT32_MAX) Py_RETURN_NONE;  /* array('I') refuses it: the reader raises */
    Table t;
    if (table_init(&t, rows, skip) < 0) return NULL;
    PyObject *lines = PyBytes_FromStringAndSize(NULL, rows * (Py_ssize_t)sizeof(uint32_t));
    int rc = lines == NULL ? -1 : 0;
    Py_ssize_t i = pos;
    for (Py_ssize_t r = 0; r < rows && rc == 0; r++) {
        const char *nl = memchr(s + i, '\n', (size_t)(n - i));
        Py_ssize_t e = nl ? nl - s : n;
        if (memchr(s + i, '\r', (size_t)(e - i)) != NULL) {
            rc = 1;  /* \r: a line break to split_lines (or half of one) */
            break;
        }
        rc = parse_row(&t, s + i, e - i, r);  /* a blank line is not an object: 1 */
        uint32_t at = (uint32_t)(line + r);
        memcpy(PyBytes_AS_STRING(lines) + r * (Py_ssize_t)sizeof at, &at, sizeof at);
        i = nl ? e + 1 : n;
    }
    PyObject *table = rc == 0 ? table_result(&t) : NULL;
    table_free(&t);
    if (rc != 0) {
        Py_XDECREF(lines);
        if (rc < 0) return NULL;
        Py_RETURN_NONE;
    }
    if (table == NULL) {
        Py_DECREF(lines);
        return NULL;
    }
    PyObject *out = Py_BuildValue("(nNN)", stop, lines, table);
    return out;
}

/* objects(kinds, values, others, absent) -> list: one key's column as the Python values json.loads gave (an int
 * for an integer literal, a float, None, the str or bool), ``absent`` where the line did not hold the key. */
static PyObject *objects(PyObject *self, PyObject *args) {
    Py_buffer kinds, values;
    PyObject *others, *absent;
    if (!PyArg_ParseTuple(args, "y*y*O!O", &kinds, &values, &PyList_Type, &others, &absent)) return NULL;
    PyObject *out = NULL;
    Py_ssize_t n = kinds.len, j = 0;
    if (values.len != n * (Py_ssize_t)sizeof(double)) {
        PyErr_SetString(PyExc_ValueError, "kinds and values differ in length");
        goto done;
    }
    out = PyList_New(n);
    if (out == NULL) goto done;
    const char *kd = kinds.buf;
    const double *vs = values.buf;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v;
        switch (kd[i]) {
            case K_INT: v = PyLong_FromLongLong((long long)vs[i]); break;
            case K_FLOAT: v = PyFloat_FromDouble(vs[i]); break;
            case K_NULL: v = Py_NewRef(Py_None); break;
            case K_ABSENT: v = Py_NewRef(absent); break;
            default:
                if (j >= PyList_GET_SIZE(others)) {
                    PyErr_SetString(PyExc_ValueError, "fewer others than their kinds");
                    v = NULL;
                } else {
                    v = Py_NewRef(PyList_GET_ITEM(others, j++));
                }
        }
        if (v == NULL) {
            Py_CLEAR(out);
            goto done;
        }
        PyList_SET_ITEM(out, i, v);
    }
done:
    PyBuffer_Release(&kinds);
    PyBuffer_Release(&values);
    return out;
}

/* odd_rows(kinds, others, absent) -> list of (row, value): the rows of one key's column that do not hold a number,
 * each with the value objects() gives there (None, the str or bool, ``absent``): the reader reads those one by one
 * and the runs of numbers between them at once, without a float object a row. */
static PyObject *odd_rows(PyObject *self, PyObject *args) {
    Py_buffer kinds;
    PyObject *others, *absent;
    if (!PyArg_ParseTuple(args, "y*O!O", &kinds, &PyList_Type, &others, &absent)) return NULL;
    PyObject *out = PyList_New(0);
    const char *kd = kinds.buf;
    Py_ssize_t j = 0;
    for (Py_ssize_t i = 0; out != NULL && i < kinds.len; i++) {
        PyObject *v;
        if (kd[i] == K_INT || kd[i] == K_FLOAT) continue;
        if (kd[i] == K_NULL) {
            v = Py_None;
        } else if (kd[i] == K_ABSENT) {
            v = absent;
        } else if (j < PyList_GET_SIZE(others)) {
            v = PyList_GET_ITEM(others, j++);
        } else {
            PyErr_SetString(PyExc_ValueError, "fewer others than their kinds");
            Py_CLEAR(out);
            break;
        }
        PyObject *pair = Py_BuildValue("(nO)", i, v);
        if (pair == NULL || PyList_Append(out, pair) < 0) Py_CLEAR(out);
        Py_XDECREF(pair);
    }
    PyBuffer_Release(&kinds);
    return out;
}

/* no_blank(lines) -> bool: whether every line holds a character that is not whitespace (str.isspace), so that
 * str.strip() leaves none of them empty: the reader's batches are then the lines as split. */
static PyObject *no_blank(PyObject *self, PyObject *args) {
    PyObject *lines;
    if (!PyArg_ParseTuple(args, "O!", &PyList_Type, &lines)) return NULL;
    for (Py_ssize_t i = 0; i < PyList_GET_SIZE(lines); i++) {
        PyObject *line = PyList_GET_ITEM(lines, i);
        if (!PyUnicode_Check(line) || PyUnicode_READY(line) < 0) return NULL;
        int kind = PyUnicode_KIND(line);
        const void *data = PyUnicode_DATA(line);
        Py_ssize_t n = PyUnicode_GET_LENGTH(line), j = 0;
        while (j < n && Py_UNICODE_ISSPACE(PyUnicode_READ(kind, data, j))) j++;
        if (j == n) Py_RETURN_FALSE;
    }
    Py_RETURN_TRUE;
}

static PyMethodDef METHODS[] = {
    {"no_blank", no_blank, METH_VARARGS, "Whether every line holds a character str.strip() keeps."},
    {"columns", columns, METH_VARARGS, "A batch of plain JSON lines as columns, or None: json.loads reads it."},
    {"columns_text", columns_text, METH_VARARGS, "columns() of a text's next lines, read in place, or None."},
    {"objects", objects, METH_VARARGS, "One column's values as json.loads gave them."},
    {"odd_rows", odd_rows, METH_VARARGS, "One column's rows that hold no number, with their values."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_cjsonl", "trainlint's compiled JSONL scanner.", -1,
                                    METHODS};

PyMODINIT_FUNC PyInit__cjsonl(void) { return PyModule_Create(&MODULE); }
