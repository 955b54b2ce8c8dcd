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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

/* ---- numbers as float() reads them: _cfloat.h (shared with _ctext.c and _cjsonl.c) ---- */
#define CFLOAT_STRICT
#include "_cfloat.h"

/* ---- CSV rows ----------------------------------------------------------------------------------------------- */

#define MAX_CELLS 4096
#define MAX_LINE 100000  /* under csv.field_size_limit()'s 131,072: a longer line goes to csv.reader */

/* Python's str.strip() whitespace among ASCII bytes (a line with another byte is not blank, or goes to Python). */
static int is_py_space(unsigned char c) {
    return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f);
}

/* The bytes split_row stops at: 1 a comma (a cell ends), 2 a byte csv.reader must read the line for (a quote, a
 * NUL, a line break); 0 any other. One table lookup a byte instead of five comparisons. */
static unsigned char CSVBYTE[256];

static void init_csvbyte(void) {
    CSVBYTE[(unsigned char)','] = 1;
    CSVBYTE[(unsigned char)'"'] = CSVBYTE[0] = CSVBYTE[(unsigned char)'\r'] = CSVBYTE[(unsigned char)'\n'] = 2;
}

/* A line of one cell: 1 str.strip() leaves nothing (csv.reader's row is skipped), 0 it does not, -1 a non-ASCII
 * byte (str.strip() knows non-ASCII spaces: let Python decide). */
static int blank_cell(const char *s, Py_ssize_t n) {
    int blank = 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c >= 0x80) return -1;
        if (!is_py_space(c)) blank = 0;
    }
    return blank;
}

/* A row's cells as (offset, length) pairs; -1: the Python path reads this line, 0: csv.reader gives no row
 * to count (an empty line, or one blank cell), else the number of cells. */
static Py_ssize_t split_row(const char *s, Py_ssize_t n, Py_ssize_t *starts, Py_ssize_t *lens) {
    if (n > MAX_LINE) return -1;
    if (n == 0) return 0;
    Py_ssize_t cells = 0, begin = 0, i = 0;
#if defined(__SSE2__)
    /* 16 bytes at a time: a byte csv.reader must read the line for anywhere makes it Python's, as below; each comma
     * ends a cell (the sparse metrics.csv's rows are mostly commas: the byte loop was most of csv_text's time) */
    const __m128i comma = _mm_set1_epi8(','), quote = _mm_set1_epi8('"'), nul = _mm_setzero_si128(),
                  cr = _mm_set1_epi8('\r'), lf = _mm_set1_epi8('\n');
    for (; i + 16 <= n; i += 16) {
        __m128i v = _mm_loadu_si128((const __m128i *)(s + i));
        __m128i odd = _mm_or_si128(_mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, nul)),
                                   _mm_or_si128(_mm_cmpeq_epi8(v, cr), _mm_cmpeq_epi8(v, lf)));
        if (_mm_movemask_epi8(odd)) return -1;
        unsigned int commas = (unsigned int)_mm_movemask_epi8(_mm_cmpeq_epi8(v, comma));
        while (commas) {
            Py_ssize_t at = i + __builtin_ctz(commas);
            commas &= commas - 1;
            if (cells >= MAX_CELLS - 1) return -1;
            starts[cells] = begin;
            lens[cells++] = at - begin;
            begin = at + 1;
        }
    }
#endif
    for (; i < n; i++) {
        unsigned char k = CSVBYTE[(unsigned char)s[i]];
        if (k == 0) continue;
        if (k == 2 || cells >= MAX_CELLS - 1) return -1;
        starts[cells] = begin;
        lens[cells++] = i - begin;
        begin = i + 1;
    }
    starts[cells] = begin;
    lens[cells++] = n - begin;
    if (cells == 1) {
        int blank = blank_cell(s, n);
        if (blank != 0) return blank > 0 ? 0 : -1;
    }
    return cells;
}

#include "_cgrow.h"

/* Append one row's parsed values to their columns' buffers (steps, values, lines, and walls when the file has a
 * wall-time column: without one every wall is NaN, which CsvReader._extend knows without a buffer of them). */
static int commit_row(Grow *grows, Py_ssize_t nb, const char *have, const double *vals, double step, double wall,
                      unsigned int line, int timed) {
    for (Py_ssize_t k = 0; k < nb; k++) {
        if (!have[k]) continue;
        Grow *g = grows + 4 * k;
        if (grow_put(g, &step, sizeof step) < 0 || grow_put(g + 1, &vals[k], sizeof(double)) < 0 ||
            grow_put(g + 2, &line, sizeof line) < 0 || (timed && grow_put(g + 3, &wall, sizeof wall) < 0))
            return -1;
    }
    return 0;
}

/* What both row loops (csv_rows over a list of lines, csv_text over a chunk's text) share: the columns, where the
 * step and wall time are, and the scratch space of one row. */
typedef struct {
    PyObject *bufs;
    Py_ssize_t nb, step_col, wall_col, rows;
    Py_ssize_t *starts, *lens;
    double *vals;
    char *have;
    Grow *grows;
} Rows;

static int rows_open(Rows *r, PyObject *bufs, Py_ssize_t step_col, Py_ssize_t wall_col, Py_ssize_t rows) {
    r->bufs = bufs;
    r->nb = PyList_GET_SIZE(bufs);
    r->step_col = step_col;
    r->wall_col = wall_col;
    r->rows = rows;
    r->starts = PyMem_Malloc(sizeof(Py_ssize_t) * MAX_CELLS * 2);
    r->lens = r->starts + MAX_CELLS;
    r->vals = PyMem_Malloc(sizeof(double) * (r->nb + 1));
    r->have = PyMem_Malloc(r->nb + 1);
    r->grows = PyMem_Calloc(4 * r->nb + 1, sizeof(Grow));
    if (r->starts && r->vals && r->have && r->grows) return 0;
    PyMem_Free(r->starts);
    PyMem_Free(r->vals);
    PyMem_Free(r->have);
    PyMem_Free(r->grows);
    PyErr_NoMemory();
    return -1;
}

/* Each column's points to its arrays (unless the loop failed: an error is set), the scratch space freed; -1: an
 * error is set. */
static int rows_close(Rows *r, int failed) {
    for (Py_ssize_t k = 0; k < r->nb; k++) {
        PyObject *buf = PyList_GET_ITEM(r->bufs, k);
        for (int f = 0; f < 4; f++) {
            if (!failed && buf != Py_None && grow_flush(r->grows + 4 * k + f, PyTuple_GET_ITEM(buf, f)) < 0)
                failed = 1;
            PyMem_Free(r->grows[4 * k + f].data);
        }
    }
    PyMem_Free(r->starts);
    PyMem_Free(r->vals);
    PyMem_Free(r->have);
    PyMem_Free(r->grows);
    return failed ? -1 : 0;
}

/* One line of a row's text (s, len bytes, no line break), physical line `line`, as CsvReader._rows reads it: 1 a
 * row (counted, its points buffered), 0 no row (csv.reader gives none, or a blank step: counted, no point), -1 the
 * Python path reads this line (nothing changed), -2 an error is set. */
static int read_row(Rows *r, const char *s, Py_ssize_t len, long long line) {
    Py_ssize_t cells = split_row(s, len, r->starts, r->lens);
    if (cells <= 0) return (int)cells;
    Py_ssize_t *starts = r->starts, *lens = r->lens;
    double step = (double)r->rows, wall = Py_NAN;
    if (r->step_col >= 0 && r->step_col < cells) {
        if (lens[r->step_col] == 0) {  /* float('') raises: the row counts, its cells are skipped */
            r->rows++;
            return 0;
        }
        if (!strict_number(s + starts[r->step_col], lens[r->step_col], &step)) return -1;
    }
    if (r->wall_col >= 0 && r->wall_col < cells && lens[r->wall_col] > 0 &&
        !strict_number(s + starts[r->wall_col], lens[r->wall_col], &wall))
        return -1;
    Py_ssize_t upto = cells < r->nb ? cells : r->nb;
    memset(r->have, 0, r->nb);
    for (Py_ssize_t k = 0; k < upto; k++) {
        if (lens[k] == 0 || PyList_GET_ITEM(r->bufs, k) == Py_None) continue;
        if (!strict_number(s + starts[k], lens[k], &r->vals[k])) return -1;  /* _odd_cell's, in Python */
        r->have[k] = 1;
    }
    if (line < 0 || line > UINT_MAX) return -1;  /* array('I') refuses it: Python raises */
    r->rows++;
    if (commit_row(r->grows, r->nb, r->have, r->vals, step, wall, (unsigned int)line, r->wall_col >= 0) < 0) {
        PyErr_NoMemory();
        return -2;
    }
    return 1;
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
    Rows r;
    if (!PyArg_ParseTuple(args, "O!nLnnnO!", &PyList_Type, &lines, &start, &first_line, &step_col, &wall_col, &rows,
                          &PyList_Type, &bufs) ||
        rows_open(&r, bufs, step_col, wall_col, rows) < 0)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(lines), j = start;
    int got = 0;
    for (; j < n; j++) {
        PyObject *line = PyList_GET_ITEM(lines, j);
        if (!PyUnicode_Check(line)) break;
        Py_ssize_t len;
        const char *s = PyUnicode_AsUTF8AndSize(line, &len);
        if (s == NULL) {
            PyErr_Clear();  /* a lone surrogate: csv.reader decides */
            break;
        }
        if ((got = read_row(&r, s, len, first_line + j)) < 0) break;
    }
    if (rows_close(&r, got == -2) < 0) return NULL;
    return Py_BuildValue("nn", j, r.rows);
}

/* csv_text(text, pos, line, step_col, wall_col, rows, bufs) -> (pos, line, rows)
 *
 * csv_rows over the lines of an ASCII chunk's text itself, from offset pos (a line's start, physical line `line`):
 * no list of lines is built, no "\r\n" rewritten. A line ends at "\n" or "\r\n"; a line holding any other "\r" (a
 * lone one, which the LSP counts as a break: core/lines.py) is left to the Python path, as is any line csv_rows
 * would leave. Stops at the first such line (its offset and line number) or at the end (pos == len(text)). A
 * text that is not compact ASCII is all left to Python (pos unchanged). */
static PyObject *csv_text(PyObject *self, PyObject *args) {
    PyObject *text, *bufs;
    Py_ssize_t pos, step_col, wall_col, rows;
    long long line;
    Rows r;
    if (!PyArg_ParseTuple(args, "UnLnnnO!", &text, &pos, &line, &step_col, &wall_col, &rows, &PyList_Type, &bufs) ||
        rows_open(&r, bufs, step_col, wall_col, rows) < 0)
        return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text);
    const char *base = PyUnicode_IS_COMPACT_ASCII(text) ? (const char *)PyUnicode_DATA(text) : NULL;
    int got = 0;
    while (base != NULL && pos >= 0 && pos < n) {
        const char *s = base + pos, *nl = memchr(s, '\n', (size_t)(n - pos));
        Py_ssize_t len = nl ? nl - s : n - pos, next = nl ? pos + len + 1 : n;
        if (nl && len > 0 && s[len - 1] == '\r') len--;  /* "\r\n": one break */
        if ((got = read_row(&r, s, len, line)) < 0) break;
        pos = next;
        line++;
    }
    if (rows_close(&r, got == -2) < 0) return NULL;
    return Py_BuildValue("nLn", pos, line, r.rows);
}

/* ---- TFRecord framing, CRC-32C, scalar events ----------------------------------------------------------------- */

static uint32_t CRC_TABLE[8][256];

static void init_crc(void) {
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++) c = (c >> 1) ^ (0x82F63B78u & (0u - (c & 1u)));
        CRC_TABLE[0][i] = c;
    }
    for (uint32_t i = 0; i < 256; i++)
        for (int t = 1; t < 8; t++) CRC_TABLE[t][i] = (CRC_TABLE[t - 1][i] >> 8) ^ CRC_TABLE[0][CRC_TABLE[t - 1][i] & 0xFF];
}

/* CRC-32C (Castagnoli), slicing by 8; the same value google_crc32c.value gives. */
static uint32_t crc32c(const unsigned char *p, size_t n) {
    uint32_t c = 0xFFFFFFFFu;
    while (n >= 8) {
        uint32_t lo = c ^ ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
        c = CRC_TABLE[7][lo & 0xFF] ^ CRC_TABLE[6][(lo >> 8) & 0xFF] ^ CRC_TABLE[5][(lo >> 16) & 0xFF] ^
            CRC_TABLE[4][lo >> 24] ^ CRC_TABLE[3][p[4]] ^ CRC_TABLE[2][p[5]] ^ CRC_TABLE[1][p[6]] ^ CRC_TABLE[0][p[7]];
        p += 8;
        n -= 8;
    }
    while (n--) c = (c >> 8) ^ CRC_TABLE[0][(c ^ *p++) & 0xFF];
    return c ^ 0xFFFFFFFFu;
}

static uint32_t masked_crc(const unsigned char *p, size_t n) {
    uint32_t c = crc32c(p, n);
    return ((c >> 15) | (c << 17)) + 0xA282EAD8u;
}

static uint32_t le32(const unsigned char *p) {
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

/* A protobuf varint; 0 when it is cut short or longer than 10 bytes (the protobuf path decides). */
static int varint(const unsigned char **pp, const unsigned char *end, uint64_t *out) {
    uint64_t v = 0;
    const unsigned char *p = *pp;
    for (int shift = 0; shift < 70 && p < end; shift += 7) {
        unsigned char b = *p++;
        if (shift == 63 && b > 1) return 0;
        v |= (uint64_t)(b & 0x7F) << shift;
        if (!(b & 0x80)) {
            *pp = p;
            *out = v;
            return 1;
        }
    }
    return 0;
}

/* One Summary.Value holding only a tag and a simple_value, each once: (tag, value) appended; 0: anything else. */
static int simple_value(const unsigned char *p, const unsigned char *end, PyObject *tags, PyObject *values) {
    const unsigned char *tag = NULL;
    uint64_t tag_len = 0;
    int have_value = 0;
    float f = 0;
    while (p < end) {
        uint64_t key, len;
        if (!varint(&p, end, &key)) return 0;
        if (key == ((1 << 3) | 2) && tag == NULL) {
            if (!varint(&p, end, &len) || len > (uint64_t)(end - p)) return 0;
            tag = p;
            tag_len = len;
            p += len;
        } else if (key == ((2 << 3) | 5) && !have_value && end - p >= 4) {
            uint32_t bits = le32(p);
            memcpy(&f, &bits, 4);
            have_value = 1;
            p += 4;
        } else {
            return 0;
        }
    }
    if (tag == NULL || !have_value) return 0;
    PyObject *t = PyUnicode_DecodeUTF8((const char *)tag, (Py_ssize_t)tag_len, "strict");
    if (t == NULL) {  /* not UTF-8: the protobuf path says what it is */
        PyErr_Clear();
        return 0;
    }
    PyObject *v = PyFloat_FromDouble((double)f);
    int ok = v != NULL && PyList_Append(tags, t) == 0 && PyList_Append(values, v) == 0;
    Py_DECREF(t);
    Py_XDECREF(v);
    return ok ? 1 : -1;
}

/* An Event of only wall_time, step and a summary of simple values (each field once): the item
 * (offset, wall_time, step, tags, values); NULL with no error: the protobuf path reads it. */
static PyObject *scalar_event(const unsigned char *p, const unsigned char *end, Py_ssize_t at) {
    uint64_t wall_bits = 0, step = 0;
    int seen_wall = 0, seen_step = 0;
    const unsigned char *sum = NULL, *sum_end = NULL;
    while (p < end) {
        uint64_t key, len;
        if (!varint(&p, end, &key)) return NULL;
        if (key == ((1 << 3) | 1) && !seen_wall && end - p >= 8) {
            wall_bits = le64(p);
            p += 8;
            seen_wall = 1;
        } else if (key == ((2 << 3) | 0) && !seen_step) {
            if (!varint(&p, end, &step)) return NULL;
            seen_step = 1;
        } else if (key == ((5 << 3) | 2) && sum == NULL) {
            if (!varint(&p, end, &len) || len > (uint64_t)(end - p)) return NULL;
            sum = p;
            sum_end = p + len;
            p += len;
        } else {
            return NULL;
        }
    }
    if (sum == NULL || sum == sum_end) return NULL;
    PyObject *tags = PyList_New(0), *values = PyList_New(0);
    if (tags == NULL || values == NULL) goto fail;
    for (const unsigned char *q = sum; q < sum_end;) {
        uint64_t key, len;
        if (!varint(&q, sum_end, &key) || key != ((1 << 3) | 2) || !varint(&q, sum_end, &len) ||
            len > (uint64_t)(sum_end - q))
            goto punt;
        int r = simple_value(q, q + len, tags, values);
        if (r < 0) goto fail;
        if (r == 0) goto punt;
        q += len;
    }
    double wall;
    memcpy(&wall, &wall_bits, 8);
    return Py_BuildValue("(ndLNN)", at, wall, (long long)(int64_t)step, tags, values);
punt:
    Py_DECREF(tags);
    Py_DECREF(values);
    return NULL;
fail:
    Py_XDECREF(tags);
    Py_XDECREF(values);
    return PyErr_Occurred() ? NULL : PyErr_NoMemory();
}

/* What tf_records needs of TensorBoardTail to add a plain scalar event's points itself, as _summary does. */
typedef struct {
    PyObject *prefix, *last_step, *first_step, *pending;
    long long record, base;
    int absorb, order_check;
    double most_recent, top;
} Ctx;

/* The tag as _summary names it: the file's prefix and the event's tag (a new reference). */
static PyObject *full_tag(Ctx *c, PyObject *tag) {
    if (PyUnicode_GET_LENGTH(c->prefix) == 0) {
        Py_INCREF(tag);
        return tag;
    }
    return PyUnicode_Concat(c->prefix, tag);
}

/* _summary for an event whose every tag has a pending buffer and a step past its last one (no out-of-order purge,
 * no duplicate): 1 when its points were added; 0 when _summary must read it (nothing changed); -1 an error. */
static int absorb(Ctx *c, PyObject *item) {
    double step = (double)PyLong_AsLongLong(PyTuple_GET_ITEM(item, 2));  /* float(int64) rounds as (double) */
    if (PyErr_Occurred()) return -1;
    if (!c->absorb || (c->order_check && step < c->most_recent)) return 0;
    PyObject *tags = PyTuple_GET_ITEM(item, 3), *values = PyTuple_GET_ITEM(item, 4);
    Py_ssize_t k = PyList_GET_SIZE(tags);
    if (k > 64) return 0;
    PyObject *full[64], *bufs[64];
    int ok = 1, i;
    for (i = 0; i < k; i++) full[i] = NULL;
    for (i = 0; ok && i < k; i++) {
        full[i] = full_tag(c, PyList_GET_ITEM(tags, i));
        if (full[i] == NULL) {
            ok = -1;
            break;
        }
        for (int j = 0; j < i && ok == 1; j++) {  /* a tag twice in one event: its second point is a duplicate */
            int eq = PyUnicode_Compare(full[i], full[j]);
            if (eq == 0) ok = 0;
        }
        PyObject *prev = ok == 1 ? PyDict_GetItemWithError(c->last_step, full[i]) : NULL;
        bufs[i] = ok == 1 ? PyDict_GetItemWithError(c->pending, full[i]) : NULL;
        if (PyErr_Occurred()) ok = -1;
        else if (ok == 1 && (bufs[i] == NULL || (prev != NULL && !(PyFloat_Check(prev) && step > PyFloat_AS_DOUBLE(prev)))))
            ok = 0;
    }
    if (ok == 1) {
        PyObject *pstep = PyFloat_FromDouble(step), *wall = PyFloat_FromDouble(PyFloat_AS_DOUBLE(PyTuple_GET_ITEM(item, 1)));
        PyObject *rec = PyLong_FromLongLong(c->record);
        PyObject *off = PyLong_FromLongLong(c->base + PyLong_AsLongLong(PyTuple_GET_ITEM(item, 0)));
        if (!pstep || !wall || !rec || !off) ok = -1;
        for (i = 0; ok == 1 && i < k; i++) {
            int had = PyDict_Contains(c->last_step, full[i]);
            PyObject *b = bufs[i];
            if (had < 0 || PyDict_SetItem(c->last_step, full[i], pstep) < 0 ||
                (!had && PyDict_SetItem(c->first_step, full[i], pstep) < 0) ||
                PyList_Append(PyTuple_GET_ITEM(b, 1), pstep) < 0 ||
                PyList_Append(PyTuple_GET_ITEM(b, 2), PyList_GET_ITEM(values, i)) < 0 ||
                PyList_Append(PyTuple_GET_ITEM(b, 3), wall) < 0 || PyList_Append(PyTuple_GET_ITEM(b, 4), rec) < 0 ||
                PyList_Append(PyTuple_GET_ITEM(b, 5), off) < 0)
                ok = -1;
        }
        Py_XDECREF(pstep);
        Py_XDECREF(wall);
        Py_XDECREF(rec);
        Py_XDECREF(off);
        if (ok == 1) {
            c->most_recent = step;
            if (k > 0 && step > c->top) c->top = step;
        }
    }
    for (i = 0; i < k; i++) Py_XDECREF(full[i]);
    return ok;
}

/* tf_records(buf, pos, max_record, limit, prefix, last_step, first_step, pending, record, base, absorb, order_check,
 *            most_recent) -> (items, pos, absorbed, most_recent, top)
 *
 * TensorBoardTail._decode's framing from buf[pos:]: every complete record whose header CRC holds and whose length is
 * at most max_record. While ``absorb`` (the file is placed), a plain scalar event that _summary would only append
 * (every tag pending, its step past the tag's last, no out-of-order purge) is added to the pending buffers here
 * (absorbed, counted from record number ``record``; ``top``: the highest step logged). Every other record is an
 * item: (offset, wall_time, step, tags, values) for a plain scalar event, (offset, None, None, None, payload) for
 * any other event (tensorboard's protobuf reads it), (offset, None, None, None, None) for a record whose data CRC
 * fails. Nothing is absorbed after the first item (_summary's reading of it changes the state the next event is
 * judged by): the call stops before the next plain scalar event. It also stops at a record it cannot frame (a bad
 * header, a length over max_record, a partial record: the Python loop reads that one and says what it is) and
 * after ``limit`` records (the next flush of the pending buffers). */
static PyObject *tf_records(PyObject *self, PyObject *args) {
    Py_buffer view;
    Py_ssize_t pos, limit, absorbed = 0;
    unsigned long long max_record;
    Ctx c;
    c.top = -Py_HUGE_VAL;
    if (!PyArg_ParseTuple(args, "y*nKnUO!O!O!LLppd", &view, &pos, &max_record, &limit, &c.prefix, &PyDict_Type,
                          &c.last_step, &PyDict_Type, &c.first_step, &PyDict_Type, &c.pending, &c.record, &c.base,
                          &c.absorb, &c.order_check, &c.most_recent))
        return NULL;
    const unsigned char *buf = view.buf;
    Py_ssize_t n = view.len;
    PyObject *items = PyList_New(0);
    if (items == NULL) goto done;
    while (pos >= 0 && pos + 12 <= n && absorbed + PyList_GET_SIZE(items) < limit) {
        const unsigned char *h = buf + pos;
        uint64_t length = le64(h);
        if (masked_crc(h, 8) != le32(h + 8) || length > max_record || (uint64_t)(n - pos - 12) < length + 4) break;
        const unsigned char *payload = h + 12;
        PyObject *item;
        if (masked_crc(payload, (size_t)length) != le32(payload + length)) {
            item = Py_BuildValue("(nOOOO)", pos, Py_None, Py_None, Py_None, Py_None);
        } else {
            item = scalar_event(payload, payload + length, pos);
            if (item != NULL && PyList_GET_SIZE(items) > 0) {  /* after an item: the next call may absorb it */
                Py_DECREF(item);
                break;
            }
            if (item != NULL) {
                int r = absorb(&c, item);
                if (r != 0) {
                    Py_DECREF(item);
                    if (r < 0) {
                        Py_CLEAR(items);
                        break;
                    }
                    absorbed++;
                    c.record++;
                    pos += 12 + (Py_ssize_t)length + 4;
                    continue;
                }
            } else if (!PyErr_Occurred()) {
                item = Py_BuildValue("(nOOOy#)", pos, Py_None, Py_None, Py_None, (const char *)payload,
                                     (Py_ssize_t)length);
            }
        }
        if (item == NULL || PyList_Append(items, item) < 0) {
            Py_XDECREF(item);
            Py_CLEAR(items);
            break;
        }
        Py_DECREF(item);
        c.record++;
        pos += 12 + (Py_ssize_t)length + 4;
    }
done:
    PyBuffer_Release(&view);
    if (items == NULL) return NULL;
    return Py_BuildValue("(Nnndd)", items, pos, absorbed, c.most_recent, c.top);
}

/* ---- module ------------------------------------------------------------------------------------------------- */

static PyMethodDef METHODS[] = {
    {"csv_rows", csv_rows, METH_VARARGS, "CsvReader.scan's loop over plain rows; stops where Python must read."},
    {"csv_text", csv_text, METH_VARARGS, "csv_rows over an ASCII chunk's text itself, from an offset."},
    {"tf_records", tf_records, METH_VARARGS, "TensorBoardTail._decode's framing, CRCs and plain scalar events."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_cscan", "trainlint's compiled scanner.", -1, METHODS};

PyMODINIT_FUNC PyInit__cscan(void) {
    init_numchar();
    init_csvbyte();
    init_crc();
    return PyModule_Create(&MODULE);
}
