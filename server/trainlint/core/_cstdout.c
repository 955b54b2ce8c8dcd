/* trainlint's compiled line pass for the general stdout reader (readers/text_stdout.py), with its Python as the
 * fallback.
 *
 * Most lines of a live run's stdout are a progress bar's redraws: a real HF Transformers 5.x stdout is 59% bar lines
 * without a postfix, whose only effect in TextStdoutReader._line is to become the pending bar (replaced by the next
 * one unless something settles it first), and 9% lines of blanks (tqdm clearing its bar), whose only effect is to
 * close a metrics block. `stdout_lines` splits a chunk's text into lines as the LSP counts them (``\r\n``, a lone
 * ``\r``, ``\n``), makes each one what `_line` is given (the first `max_line` characters, colour codes, cursor moves
 * and backspaces removed: `clean`'s regex ``\x1b\[[0-9;?]*[A-Za-z]|\x08``) and hands back, with its line number,
 * every line except:
 *   - a bar redraw (``%|``, no ``=``, none of the strings `_line` looks for before it: ``|Loss: ``, ``GPU available:
 *     ``, ```Trainer.fit` ``) followed by another one with only dropped lines between: its pending bar would be
 *     replaced before anything reads it (the last of each run is handed back, and the chunk's last always);
 *   - a line of blanks (empty once cleaned, or all `str.isspace`) while no metrics block can be open: none has been
 *     handed back since the last blank that was (each chunk starts as if one could be open). A metrics block opens
 *     only on a line starting with ``*****``, so a line starting with ``*`` marks it as possibly open.
 * A redraw handed back right before another line comes with it, as the third item of that line's (number, line, bar)
 * (None otherwise): `_line`'s only effect on it would be to make it the pending bar, which the reader does itself
 * (the chunk's last redraw, with nothing after it, comes back as a line of its own). The reader calls `_line` on the
 * rest, in order: the same calls but the dropped ones, whose effect nothing observes, so both paths give identical
 * output by construction (tests/test_compiled_text.py and
 * tests/test_compiled_scanner.py hold them to it).
 *
 * Its own extension module, so that each scanner can be built, and fall back, on its own.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <string.h>

#if defined(__GNUC__) || defined(__clang__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

/* The code point at i of a str's data of this kind (a constant where it is inlined: one loop per kind). */
static ALWAYS_INLINE Py_UCS4 at(const void *data, const int kind, Py_ssize_t i) {
    if (kind == PyUnicode_1BYTE_KIND) return ((const Py_UCS1 *)data)[i];
    if (kind == PyUnicode_2BYTE_KIND) return ((const Py_UCS2 *)data)[i];
    return ((const Py_UCS4 *)data)[i];
}

/* s[k:] starts with the ASCII string lit (of length len). */
static ALWAYS_INLINE int starts(const void *s, const int kind, Py_ssize_t k, Py_ssize_t n, const char *lit,
                                Py_ssize_t len) {
    if (n - k < len) return 0;
    for (Py_ssize_t q = 0; q < len; q++)
        if (at(s, kind, k + q) != (Py_UCS4)(unsigned char)lit[q]) return 0;
    return 1;
}

/* What `_line` would do with a cleaned line: only store it as the pending bar (REDRAW), only close a metrics block
 * (BLANK), possibly open one (STAR: its first character is ``*``), or anything (0). */
enum { SHAPE_OTHER = 0, SHAPE_REDRAW = 1, SHAPE_BLANK = 2, SHAPE_STAR = 4 };

#define LIT(s) s, (Py_ssize_t)(sizeof(s) - 1)

/* The shape of s[0:n] (an already cleaned line). */
static ALWAYS_INLINE int shape_of(const void *s, const int kind, Py_ssize_t n) {
    int pct = 0, eq = 0, other = 0, blank = 1;
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_UCS4 c = at(s, kind, k);
        if (blank && !Py_UNICODE_ISSPACE(c)) blank = 0;
        switch (c) {
        case '=':
            eq = 1;
            break;
        case '%':
            if (k + 1 < n && at(s, kind, k + 1) == '|') pct = 1;
            break;
        case '|':
            if (starts(s, kind, k, n, LIT("|Loss: "))) other = 1;
            break;
        case 'G':
            if (starts(s, kind, k, n, LIT("GPU available: "))) other = 1;
            break;
        case '`':
            if (starts(s, kind, k, n, LIT("`Trainer.fit` "))) other = 1;
            break;
        default:
            break;
        }
    }
    if (blank) return SHAPE_BLANK;
    if (pct && !eq && !other) return SHAPE_REDRAW;
    return (n > 0 && at(s, kind, 0) == '*') ? SHAPE_STAR : SHAPE_OTHER;
}

/* `clean` of s[0:n] into out (room for n): ``\x1b[`` then digits, ``;`` or ``?`` then an ASCII letter, and
 * backspaces, removed left to right as re.sub does. The cleaned length. */
static ALWAYS_INLINE Py_ssize_t clean_into(const void *s, const int kind, Py_ssize_t n, Py_UCS4 *out) {
    Py_ssize_t m = 0;
    for (Py_ssize_t k = 0; k < n; k++) {
        Py_UCS4 c = at(s, kind, k);
        if (c == 0x08) continue;
        if (c == 0x1b && k + 1 < n && at(s, kind, k + 1) == '[') {
            Py_ssize_t q = k + 2;
            Py_UCS4 d = 0;
            while (q < n && (((d = at(s, kind, q)) >= '0' && d <= '9') || d == ';' || d == '?')) q++;
            if (q < n && ((d >= 'A' && d <= 'Z') || (d >= 'a' && d <= 'z'))) {
                k = q;
                continue;
            }
        }
        out[m++] = c;
    }
    return m;
}

typedef struct {
    PyObject *text, *out;
    Py_UCS4 *buf;  /* a cleaned line */
    Py_ssize_t max_line;
    /* the pending redraw not yet handed back: its start in the text, its length (truncated), its line number */
    Py_ssize_t pend_start, pend_n, pend_no;
    int pend_dirty, maybe_block;
} Pass;

/* The cleaned line text[start:start+n], a new reference. */
static ALWAYS_INLINE PyObject *line_of(Pass *p, const void *data, const int kind, Py_ssize_t start, Py_ssize_t n,
                                       int dirty) {
    if (dirty) {
        Py_ssize_t m = clean_into((const char *)data + start * kind, kind, n, p->buf);
        return PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, p->buf, m);
    }
    return PyUnicode_Substring(p->text, start, start + n);
}

/* Append (line number, the cleaned line text[start:start+n], bar) to the output; bar (a reference it takes) is the
 * redraw handed back right before the line, or NULL for None. */
static ALWAYS_INLINE int emit(Pass *p, const void *data, const int kind, Py_ssize_t start, Py_ssize_t n, int dirty,
                              Py_ssize_t no, PyObject *bar) {
    PyObject *line = line_of(p, data, kind, start, n, dirty);
    PyObject *num = line == NULL ? NULL : PyLong_FromSsize_t(no);
    PyObject *item = num == NULL ? NULL : PyTuple_New(3);
    if (item == NULL) {
        Py_XDECREF(line);
        Py_XDECREF(num);
        Py_XDECREF(bar);
        return -1;
    }
    PyTuple_SET_ITEM(item, 0, num);
    PyTuple_SET_ITEM(item, 1, line);
    PyTuple_SET_ITEM(item, 2, bar != NULL ? bar : Py_NewRef(Py_None));
    int r = PyList_Append(p->out, item);
    Py_DECREF(item);
    return r;
}

/* The chunk's last pending redraw, handed back as a line of its own. */
static ALWAYS_INLINE int flush_pending(Pass *p, const void *data, const int kind) {
    if (p->pend_start < 0) return 0;
    Py_ssize_t start = p->pend_start;
    p->pend_start = -1;
    return emit(p, data, kind, start, p->pend_n, p->pend_dirty, p->pend_no, NULL);
}

/* The end of the line that starts at i (the first ``\r`` or ``\n`` from i, or len), in one pass that also gives, in
 * *shape, what shape_of gives its first max_line characters, or -1 when one of them is ``\x1b`` or a backspace (the
 * line is then cleaned first and shape_of reads the cleaned text). Within the first max_line characters (lim) the
 * checks are shape_of's: a literal it looks for holds no line break, so it matches within the line exactly when it
 * matches within lim; ``%|``'s ``|`` is no line break either. Past lim only the line break is looked for. */
static ALWAYS_INLINE Py_ssize_t scan_line(const void *data, const int kind, Py_ssize_t i, Py_ssize_t len,
                                          Py_ssize_t max_line, int *shape) {
    Py_ssize_t lim = len - i > max_line ? i + max_line : len, j = i;
    int pct = 0, eq = 0, other = 0, blank = 1, dirty = 0;
    Py_UCS4 c;
    for (; j < lim; j++) {
        c = at(data, kind, j);
        switch (c) {
        case '\n':
        case '\r':
            goto end;
        case 0x1b:
        case 0x08:
            dirty = 1;
            break;
        case '=':
            eq = 1;
            break;
        case '%':
            if (j + 1 < lim && at(data, kind, j + 1) == '|') pct = 1;
            break;
        case '|':
            if (starts(data, kind, j, lim, LIT("|Loss: "))) other = 1;
            break;
        case 'G':
            if (starts(data, kind, j, lim, LIT("GPU available: "))) other = 1;
            break;
        case '`':
            if (starts(data, kind, j, lim, LIT("`Trainer.fit` "))) other = 1;
            break;
        default:
            break;
        }
        if (blank && !Py_UNICODE_ISSPACE(c)) blank = 0;
    }
    while (j < len && (c = at(data, kind, j)) != '\n' && c != '\r') j++;
end:
    if (dirty) *shape = -1;
    else if (blank) *shape = SHAPE_BLANK;
    else if (pct && !eq && !other) *shape = SHAPE_REDRAW;
    else *shape = (j > i && at(data, kind, i) == '*') ? SHAPE_STAR : SHAPE_OTHER;
    return j;
}

/* One line, text[start:end] (not empty), numbered no, of the shape scan_line found (-1: to be cleaned first). */
static ALWAYS_INLINE int one_line(Pass *p, const void *data, const int kind, Py_ssize_t start, Py_ssize_t end,
                                  Py_ssize_t no, int shape) {
    Py_ssize_t n = end - start < p->max_line ? end - start : p->max_line;
    int dirty = shape < 0;
    if (dirty) {
        Py_ssize_t m = clean_into((const char *)data + start * kind, kind, n, p->buf);
        shape = shape_of(p->buf, PyUnicode_4BYTE_KIND, m);
    }
    if (shape == SHAPE_REDRAW) {  /* replaces the pending one, which nothing read */
        p->pend_start = start;
        p->pend_n = n;
        p->pend_dirty = dirty;
        p->pend_no = no;
        return 0;
    }
    if (shape == SHAPE_BLANK && !p->maybe_block) return 0;  /* it would close a block that is not open */
    PyObject *bar = NULL;  /* the pending redraw goes with this line: _line would only have made it the pending bar */
    if (p->pend_start >= 0) {
        bar = line_of(p, data, kind, p->pend_start, p->pend_n, p->pend_dirty);
        p->pend_start = -1;
        if (bar == NULL) return -1;
    }
    if (emit(p, data, kind, start, n, dirty, no, bar) < 0) return -1;
    if (shape == SHAPE_BLANK) p->maybe_block = 0;
    else if (shape == SHAPE_STAR) p->maybe_block = 1;
    return 0;
}

/* Every line of the text, as split_lines splits it; empty lines are not read. */
static ALWAYS_INLINE int all_lines(Pass *p, const void *data, const int kind, Py_ssize_t len, Py_ssize_t first) {
    Py_ssize_t i = 0, no = first;
    while (i < len) {
        int shape;
        Py_ssize_t j = scan_line(data, kind, i, len, p->max_line, &shape);
        if (j > i && one_line(p, data, kind, i, j, no, shape) < 0) return -1;
        if (j < len) j += (at(data, kind, j) == '\r' && j + 1 < len && at(data, kind, j + 1) == '\n') ? 2 : 1;
        i = j;
        no++;
    }
    return flush_pending(p, data, kind);
}

PyDoc_STRVAR(stdout_lines_doc,
"stdout_lines(text, first_line, max_line) -> [(line number, cleaned line, bar or None), ...]\n\n"
"The lines of text that TextStdoutReader._line must read, each as _line is given it (its first max_line\n"
"characters, colour codes, cursor moves and backspaces removed): all but the bar redraws a later one replaces\n"
"and the blank lines that close no metrics block. A redraw right before a line comes as that line's bar (the\n"
"pending bar _line would make it), the chunk's last one as a line of its own.");

static PyObject *stdout_lines(PyObject *self, PyObject *args) {
    PyObject *text;
    Py_ssize_t first, max_line;
    if (!PyArg_ParseTuple(args, "Unn", &text, &first, &max_line)) return NULL;
    if (max_line < 1) {
        PyErr_SetString(PyExc_ValueError, "max_line must be positive");
        return NULL;
    }
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    Pass p = {text, PyList_New(0), NULL, max_line, -1, 0, 0, 0, 1};
    if (p.out == NULL) return NULL;
    p.buf = PyMem_Malloc(sizeof(Py_UCS4) * (size_t)(len < max_line ? (len > 0 ? len : 1) : max_line));
    if (p.buf == NULL) {
        Py_DECREF(p.out);
        return PyErr_NoMemory();
    }
    const void *data = PyUnicode_DATA(text);
    int r;
    switch (PyUnicode_KIND(text)) {
    case PyUnicode_1BYTE_KIND:
        r = all_lines(&p, data, PyUnicode_1BYTE_KIND, len, first);
        break;
    case PyUnicode_2BYTE_KIND:
        r = all_lines(&p, data, PyUnicode_2BYTE_KIND, len, first);
        break;
    default:
        r = all_lines(&p, data, PyUnicode_4BYTE_KIND, len, first);
        break;
    }
    PyMem_Free(p.buf);
    if (r < 0) {
        Py_DECREF(p.out);
        return NULL;
    }
    return p.out;
}

/* ---- HF Trainer's dicts ---------------------------------------------------------------------------------- */

/* The length of a number at s[k:e] when s[k:e] is exactly one of NUMBER_RE's (core/model.py) with ASCII digits
 * (``[-+]?(\d+(\.\d*)?|\.\d+)([eE][-+]?\d+)?`` or a sign and nan, NaN, NAN, inf, Inf, INF, Infinity,
 * infinity), else 0. */
static ALWAYS_INLINE int is_number(const void *s, const int kind, Py_ssize_t k, Py_ssize_t e) {
    static const char *words[] = {"nan", "NaN", "NAN", "inf", "Inf", "INF", "Infinity", "infinity"};
    if (k < e && (at(s, kind, k) == '-' || at(s, kind, k) == '+')) k++;
    Py_ssize_t q = k, digits = 0;
    while (q < e && at(s, kind, q) >= '0' && at(s, kind, q) <= '9') q++, digits++;
    if (q < e && at(s, kind, q) == '.') {
        q++;
        while (q < e && at(s, kind, q) >= '0' && at(s, kind, q) <= '9') q++, digits++;
    }
    if (digits > 0) {
        if (q < e && (at(s, kind, q) == 'e' || at(s, kind, q) == 'E')) {
            Py_ssize_t x = q + 1, xd = 0;
            if (x < e && (at(s, kind, x) == '-' || at(s, kind, x) == '+')) x++;
            while (x < e && at(s, kind, x) >= '0' && at(s, kind, x) <= '9') x++, xd++;
            if (xd == 0) return 0;
            q = x;
        }
        return q == e;
    }
    for (size_t w = 0; w < sizeof(words) / sizeof(words[0]); w++) {
        Py_ssize_t len = (Py_ssize_t)strlen(words[w]);
        if (e - k == len && starts(s, kind, k, e, words[w], len)) return 1;
    }
    return 0;
}

/* One pair of a plain dict line: its key at [key, key_end), its value's number at [v, v_end), quoted or not. */
typedef struct {
    Py_ssize_t key, key_end, v, v_end;
    int quoted;
} Span;

/* The pairs of a dict line of exactly the shape ``{'key': 'value', 'key': value}`` (keys of 1 to 80 characters
 * without a quote or a line break, values numbers as is_number reads them, each quoted or not, nothing else on the
 * line), into *spans (grown with PyMem_Realloc, *count of them): 1, or 0 for any other line, -1 out of memory.
 * _HF_PAIR's finditer on such a line finds exactly these pairs: a match starts at a quote; the key's greedy run stops
 * at its closing quote; the value's greedy first try is the whole number, and the closing quote and the ``,`` or
 * ``}`` after it let it stand; the next search starts at the ``, `` before the next key's quote. */
static int hf_spans(const void *s, const int kind, Py_ssize_t n, Span **spans, Py_ssize_t *count) {
    Py_ssize_t k = 1, room = 0;
    *count = 0;
    if (n < 2 || at(s, kind, 0) != '{' || at(s, kind, n - 1) != '}') return 0;
    for (;;) {
        if (k >= n || at(s, kind, k) != '\'') return 0;
        Py_ssize_t key = ++k;
        while (k < n && at(s, kind, k) != '\'' && at(s, kind, k) != '\n') k++;
        if (k - key < 1 || k - key > 80 || !starts(s, kind, k, n, LIT("': "))) return 0;
        Py_ssize_t key_end = k;
        k += 3;
        int quoted = k < n && at(s, kind, k) == '\'';
        Py_ssize_t v = k + quoted, v_end = v;
        while (v_end < n && at(s, kind, v_end) != '\'' && at(s, kind, v_end) != ',' && at(s, kind, v_end) != '}')
            v_end++;
        if (!is_number(s, kind, v, v_end)) return 0;
        k = v_end;
        if (quoted) {
            if (k >= n || at(s, kind, k) != '\'') return 0;
            k++;
        }
        if (k >= n || (at(s, kind, k) != ',' && at(s, kind, k) != '}')) return 0;
        if (*count == room) {
            room = room ? 2 * room : 8;
            Span *grown = PyMem_Realloc(*spans, sizeof(Span) * (size_t)room);
            if (grown == NULL) return -1;
            *spans = grown;
        }
        (*spans)[(*count)++] = (Span){key, key_end, v, v_end, quoted};
        if (k == n - 1) return 1;  /* the closing brace */
        if (!starts(s, kind, k, n, LIT(", "))) return 0;
        k += 2;
    }
}

/* (key, value text, quoted) of one span, a new reference. */
static PyObject *pair_of(PyObject *line, const Span *sp) {
    PyObject *ks = PyUnicode_Substring(line, sp->key, sp->key_end), *vs = PyUnicode_Substring(line, sp->v, sp->v_end);
    PyObject *item = ks == NULL || vs == NULL ? NULL : PyTuple_Pack(3, ks, vs, sp->quoted ? Py_True : Py_False);
    Py_XDECREF(ks);
    Py_XDECREF(vs);
    return item;
}

/* [(key, value, quoted)] of the spans. */
static PyObject *pairs_list(PyObject *line, const Span *spans, Py_ssize_t count) {
    PyObject *out = PyList_New(count);
    for (Py_ssize_t i = 0; out != NULL && i < count; i++) {
        PyObject *item = pair_of(line, &spans[i]);
        if (item == NULL) Py_CLEAR(out);
        else PyList_SET_ITEM(out, i, item);
    }
    return out;
}

/* The double float() reads from s[v:v_end], an ASCII number is_number accepted: float(str) of such a text is
 * PyOS_string_to_double of its characters (no blanks to strip, no underscores). */
static PyObject *number_of(const void *s, const int kind, Py_ssize_t v, Py_ssize_t v_end) {
    char small[64], *buf = v_end - v < 64 ? small : PyMem_Malloc((size_t)(v_end - v + 1));
    if (buf == NULL) return PyErr_NoMemory();
    for (Py_ssize_t q = v; q < v_end; q++) buf[q - v] = (char)at(s, kind, q);
    buf[v_end - v] = '\0';
    char *end;
    double x = PyOS_string_to_double(buf, &end, NULL);
    int whole = end == buf + (v_end - v);
    if (buf != small) PyMem_Free(buf);
    if (x == -1.0 && PyErr_Occurred()) return NULL;
    if (!whole) {  /* is_number holds only what float() reads whole: not reached */
        PyErr_SetString(PyExc_ValueError, "hf_dict: a value float() does not read");
        return NULL;
    }
    return PyFloat_FromDouble(x);
}

/* The span's key is the ASCII lit. */
static ALWAYS_INLINE int key_is(const void *s, const int kind, const Span *sp, const char *lit, Py_ssize_t len) {
    return sp->key_end - sp->key == len && starts(s, kind, sp->key, sp->key_end, lit, len);
}

/* What the reader's `_hf_parsed` makes of the spans: the keys but ``epoch`` and their values as float() reads them,
 * the first ``epoch`` pair or None, and the kind: 2 for a ``train_runtime`` key anywhere (the keys and values then
 * empty, the epoch None), 1 for a key starting ``eval_``, else 0. */
static PyObject *parsed_of(PyObject *line, const void *s, const int kind, const Span *spans, Py_ssize_t count) {
    PyObject *keys = PyTuple_New(count), *values = PyTuple_New(count), *epoch = NULL, *out = NULL;
    Py_ssize_t m = 0;
    int what = 0;
    if (keys == NULL || values == NULL) goto done;
    for (Py_ssize_t i = 0; i < count; i++) {
        const Span *sp = &spans[i];
        if (key_is(s, kind, sp, LIT("epoch"))) {
            if (epoch == NULL && (epoch = pair_of(line, sp)) == NULL) goto done;
            continue;
        }
        if (key_is(s, kind, sp, LIT("train_runtime"))) {
            out = Py_BuildValue("(()()Oi)", Py_None, 2);
            goto done;
        }
        if (starts(s, kind, sp->key, sp->key_end, LIT("eval_"))) what = 1;
        PyObject *ks = PyUnicode_Substring(line, sp->key, sp->key_end);
        if (ks == NULL) goto done;
        PyTuple_SET_ITEM(keys, m, ks);
        PyObject *v = number_of(s, kind, sp->v, sp->v_end);
        if (v == NULL) goto done;
        PyTuple_SET_ITEM(values, m, v);
        m++;
    }
    if (_PyTuple_Resize(&keys, m) < 0 || _PyTuple_Resize(&values, m) < 0) goto done;
    out = Py_BuildValue("(OOOi)", keys, values, epoch != NULL ? epoch : Py_None, what);
done:
    Py_XDECREF(keys);
    Py_XDECREF(values);
    Py_XDECREF(epoch);
    return out;
}

/* hf_pairs (parsed 0) or hf_dict (parsed 1) of a str line. */
static PyObject *hf_line(PyObject *line, int parsed) {
    if (!PyUnicode_Check(line)) {
        PyErr_SetString(PyExc_TypeError, "hf_pairs and hf_dict take a str");
        return NULL;
    }
    const void *data = PyUnicode_DATA(line);
    const int kind = PyUnicode_KIND(line);
    Py_ssize_t n = PyUnicode_GET_LENGTH(line), count;
    Span *spans = NULL;
    int r;
    switch (kind) {
    case PyUnicode_1BYTE_KIND:
        r = hf_spans(data, PyUnicode_1BYTE_KIND, n, &spans, &count);
        break;
    case PyUnicode_2BYTE_KIND:
        r = hf_spans(data, PyUnicode_2BYTE_KIND, n, &spans, &count);
        break;
    default:
        r = hf_spans(data, PyUnicode_4BYTE_KIND, n, &spans, &count);
        break;
    }
    PyObject *out = r < 0 ? PyErr_NoMemory() : r == 0 ? Py_NewRef(Py_None)
                    : parsed ? parsed_of(line, data, kind, spans, count) : pairs_list(line, spans, count);
    PyMem_Free(spans);
    return out;
}

PyDoc_STRVAR(hf_pairs_doc,
"hf_pairs(line) -> [(key, value, quoted), ...] or None\n\n"
"The pairs _HF_PAIR finds on an HF Trainer dict line of the plain shape {'key': 'number', 'key': number}\n"
"(quoted: the match ends with a quote); None for any other line, which the regex reads. The reader calls\n"
"hf_dict, which reads the same spans; this gives them as the regex would, for the tests that hold both to it.");

static PyObject *hf_pairs(PyObject *self, PyObject *line) { return hf_line(line, 0); }

PyDoc_STRVAR(hf_dict_doc,
"hf_dict(line) -> (keys, values, epoch pair or None, kind) or None\n\n"
"What TextStdoutReader's _hf_parsed makes of a plain HF dict line (see hf_pairs): the keys but 'epoch', their\n"
"float() values, the first epoch pair (key, value, quoted), kind 2 for a train_runtime dict, 1 for an evaluation\n"
"one, else 0; None for any other line.");

static PyObject *hf_dict(PyObject *self, PyObject *line) { return hf_line(line, 1); }

PyDoc_STRVAR(hf_append_doc,
"hf_append(arrays, values, step, n) -> bool\n\n"
"arrays: five per value (a series' steps, values, lines, walls, records). When no series has a wall time or a\n"
"record, each value's point (step, value, line n) is appended to its series' three arrays, as Series.append does\n"
"without them, and True is returned; else nothing is appended and False is returned (the reader appends them).");

static PyObject *hf_append(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    static PyObject *append = NULL;
    if (nargs != 4 || !PyTuple_Check(args[0]) || !PyTuple_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "hf_append(arrays: tuple, values: tuple, step, n)");
        return NULL;
    }
    PyObject *arrays = args[0], *values = args[1];
    Py_ssize_t count = PyTuple_GET_SIZE(values);
    if (PyTuple_GET_SIZE(arrays) != 5 * count) {
        PyErr_SetString(PyExc_ValueError, "hf_append: five arrays a value");
        return NULL;
    }
    if (append == NULL && (append = PyUnicode_InternFromString("append")) == NULL) return NULL;
    for (Py_ssize_t i = 0; i < count; i++) {  /* walls or records: Series.append's other arrays, the reader's loop */
        for (int w = 3; w < 5; w++) {
            Py_ssize_t len = PyObject_Size(PyTuple_GET_ITEM(arrays, 5 * i + w));
            if (len < 0) return NULL;
            if (len > 0) Py_RETURN_FALSE;
        }
    }
    for (Py_ssize_t i = 0; i < count; i++) {
        PyObject *put[3] = {args[2], PyTuple_GET_ITEM(values, i), args[3]};
        for (int a = 0; a < 3; a++) {
            PyObject *r = PyObject_CallMethodOneArg(PyTuple_GET_ITEM(arrays, 5 * i + a), append, put[a]);
            if (r == NULL) return NULL;
            Py_DECREF(r);
        }
    }
    Py_RETURN_TRUE;
}

/* ---- the plain progress bar ----------------------------------------------------------------------------- */

/* The ASCII digits at s[*k:] (at most most of them, and at least one) as their value, *k moved past them; -1 when there
 * are none or more than most. */
static ALWAYS_INLINE long long digits_at(const void *s, const int kind, Py_ssize_t *k, Py_ssize_t n, int most) {
    long long v = 0;
    int d = 0;
    Py_UCS4 c;
    while (*k < n && (c = at(s, kind, *k)) >= '0' && c <= '9') {
        if (++d > most) return -1;
        v = v * 10 + (long long)(c - '0');
        (*k)++;
    }
    return d > 0 ? v : -1;
}

/* (n, total) of a plain tqdm bar: `_TQDM`'s search finds its match at the line's first digit after nothing but
 * spaces (the description is blank, so `_bar_desc` gives no evaluation bar and no epoch) and the bracket holds no
 * postfix (its text splits at ``, `` into fewer than three parts). Each piece is read as the regex's greedy first try
 * with ASCII only: ``\d{1,3}`` then ``%|``, ``[^|]{0,200}`` up to the first ``|``, ``\s{0,4}`` as spaces,
 * ``\d{1,15}/\d{1,15}``, spaces, ``[`` and ``[^\]]{0,2000}`` up to the first ``]``. A greedy run of characters the
 * next piece cannot start with has no shorter try that succeeds, and the spaces before cannot start a match, so the
 * first try succeeding is the search's match; anything else (a non-ASCII digit or blank where these are looked for,
 * a run too long) is None, and the regex reads the line. */
static PyObject *plain_bar_of(const void *s, const int kind, Py_ssize_t n) {
    Py_ssize_t k = 0, q;
    while (k < n && at(s, kind, k) == ' ') k++;
    if (digits_at(s, kind, &k, n, 3) < 0 || !starts(s, kind, k, n, LIT("%|"))) Py_RETURN_NONE;
    for (q = k += 2; k < n && k - q <= 200 && at(s, kind, k) != '|'; k++) {}
    if (k >= n || k - q > 200) Py_RETURN_NONE;
    for (q = ++k; k < n && at(s, kind, k) == ' '; k++) {}
    if (k - q > 4) Py_RETURN_NONE;
    long long pos = digits_at(s, kind, &k, n, 15);
    if (pos < 0 || k >= n || at(s, kind, k) != '/') Py_RETURN_NONE;
    k++;
    long long total = digits_at(s, kind, &k, n, 15);
    if (total < 0) Py_RETURN_NONE;
    for (q = k; k < n && at(s, kind, k) == ' '; k++) {}
    if (k - q > 4 || k >= n || at(s, kind, k) != '[') Py_RETURN_NONE;
    int commas = 0;
    for (q = ++k; k < n && k - q <= 2000 && at(s, kind, k) != ']'; k++)
        if (at(s, kind, k) == ',' && k + 1 < n && at(s, kind, k + 1) == ' ') {
            if (++commas > 1) Py_RETURN_NONE;  /* a postfix: the regex path reads its pairs */
            k++;
        }
    if (k >= n || k - q > 2000 || at(s, kind, k) != ']') Py_RETURN_NONE;
    return Py_BuildValue("(LL)", pos, total);
}

PyDoc_STRVAR(plain_bar_doc,
"plain_bar(line) -> (n, total) or None\n\n"
"The position and total of a tqdm bar line _TQDM matches after a blank description, without a postfix in its\n"
"bracket; None for any other line, which the regex reads.");

static PyObject *plain_bar(PyObject *self, PyObject *line) {
    if (!PyUnicode_Check(line)) {
        PyErr_SetString(PyExc_TypeError, "plain_bar takes a str");
        return NULL;
    }
    const void *data = PyUnicode_DATA(line);
    Py_ssize_t n = PyUnicode_GET_LENGTH(line);
    switch (PyUnicode_KIND(line)) {
    case PyUnicode_1BYTE_KIND:
        return plain_bar_of(data, PyUnicode_1BYTE_KIND, n);
    case PyUnicode_2BYTE_KIND:
        return plain_bar_of(data, PyUnicode_2BYTE_KIND, n);
    default:
        return plain_bar_of(data, PyUnicode_4BYTE_KIND, n);
    }
}

static PyMethodDef methods[] = {
    {"stdout_lines", stdout_lines, METH_VARARGS, stdout_lines_doc},
    {"hf_pairs", hf_pairs, METH_O, hf_pairs_doc},
    {"plain_bar", plain_bar, METH_O, plain_bar_doc},
    {"hf_dict", hf_dict, METH_O, hf_dict_doc},
    {"hf_append", (PyCFunction)(void (*)(void))hf_append, METH_FASTCALL, hf_append_doc},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_cstdout",
    "The compiled line pass of trainlint's stdout reader (readers/text_stdout.py).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__cstdout(void) { return PyModule_Create(&module); }
