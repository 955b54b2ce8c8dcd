/* trainlint's compiled line pass for the general stdout reader (readers/text_stdout.py), with its Python as the
 * fallback.
 *
 * Most lines of a live run's stdout are a progress bar's redraws: a real HF Transformers 5.x stdout is 59% bar lines
 * without a postfix, whose only effect in TextStdoutReader._line is to become the pending bar (replaced by the next
 * one unless something settles it first), and 9% lines of blanks (tqdm clearing its bar), whose only effect is to
 * close a metrics block. `stdout_scan` splits a chunk's text into lines as the LSP counts them (``\r\n``, a lone
 * ``\r``, ``\n``), makes each one what `_line` is given (the first `max_line` characters, colour codes, cursor moves
 * and backspaces removed: `clean`'s regex ``\x1b\[[0-9;?]*[A-Za-z]|\x08``) and calls `_line` on it with its line
 * number, for every line except:
 *   - a bar redraw (``%|``, no ``=``, none of the strings `_line` looks for before it: ``|Loss: ``, ``GPU available:
 *     ``, ```Trainer.fit` ``) followed by another one with only dropped lines between: its pending bar would be
 *     replaced before anything reads it (the last of each run is kept, and the chunk's last always);
 *   - a line of blanks (empty once cleaned, or all `str.isspace`) while no metrics block can be open: none has been
 *     read since the last blank that was (each chunk starts as if one could be open). A metrics block opens only on
 *     a line starting with ``*****``, so a line starting with ``*`` marks it as possibly open;
 *   - an HF Trainer dict of the plain shape (`hf_spans`) once the steps' mode is the bar's, whose keys' series
 *     exist: read here, as `_settle_bar` and `_hf_dict` read it, over the reader state's fields (`HF`: loaded when
 *     a dict first needs them, written back before any Python code runs again). A dict this cannot prove it reads
 *     as Python does (a new set of keys, the closing summary, a bar `_tqdm`'s regex must read, one that sets
 *     max_steps, the steps' mode undecided or the count's) goes to `_line`, with nothing changed.
 * A kept redraw right before a line `_line` reads is made the state's pending bar first: `_line`'s only effect on it
 * (the chunk's last redraw, with nothing after it, is read as a line of its own). The calls left out are those
 * whose effect nothing observes or that C makes itself, so both paths give identical output
 * (tests/test_compiled_text.py and tests/test_compiled_scanner.py hold them to it). 169k HF dicts of a 100 MB HF
 * 5.x stdout went through `_line`, `_settle_bar`, `_hf_dict` and `_hf_lag`: 0.6 s of its 1.08 s read.
 *
 * Its own extension module, so that each scanner can be built, and fall back, on its own.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "_cfloat.h"
#include "_cgrow.h"
#include "_croom.h"

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

/* The ASCII characters the switches of shape_of and scan_line look for. */
static const unsigned char STOP[128] = {['\n'] = 1, ['\r'] = 1, [0x1b] = 1, [0x08] = 1, ['='] = 1, ['%'] = 1,
                                        ['|'] = 1, ['G'] = 1, ['`'] = 1};

/* The first index from j below lim of a character in STOP that its switch acts on, or lim (an index of one it does
 * not act on, at worst: the switch checks). SSE2 compares 16 (1-byte str) or 8 (2-byte) characters at a time, and the
 * characters after them, where the compiler targets it (every x86-64): a line break, ``\x1b``, a backspace and ``=``
 * always stop it, ``%``, ``|``, ``G`` and `````` only before the second character of their literal (``%|``, ``|Loss:
 * ``, ``GPU available: ``, ```Trainer.fit` ``), so a bar's redraw stops it once, at its ``%|``. Elsewhere, and for
 * the last characters, one by one at each character of STOP. */
static ALWAYS_INLINE Py_ssize_t to_stop(const void *data, const int kind, Py_ssize_t j, Py_ssize_t lim) {
#if defined(__SSE2__)
#define ANY_OF(v, E, a, b, c, d, e) \
    _mm_or_si128(_mm_or_si128(_mm_or_si128(E(v, a), E(v, b)), _mm_or_si128(E(v, c), E(v, d))), E(v, e))
#define PAIR(v, w, E, a, b) _mm_and_si128(E(v, a), E(w, b))
/* The lanes of v (w: the lanes one character on) at one of STOP's characters or pairs; E compares, S broadcasts. */
#define STOPS(v, w, E, S)                                                                                         \
    _mm_or_si128(ANY_OF(v, E, S('\n'), S('\r'), S(0x1b), S(0x08), S('=')),                                       \
                 _mm_or_si128(_mm_or_si128(PAIR(v, w, E, S('%'), S('|')), PAIR(v, w, E, S('|'), S('L'))),         \
                              _mm_or_si128(PAIR(v, w, E, S('G'), S('P')), PAIR(v, w, E, S('`'), S('T')))))
    if (kind == PyUnicode_1BYTE_KIND) {
        const Py_UCS1 *d = (const Py_UCS1 *)data;
        for (; j + 17 <= lim; j += 16) {
            __m128i v = _mm_loadu_si128((const __m128i *)(d + j)), w = _mm_loadu_si128((const __m128i *)(d + j + 1));
            int mask = _mm_movemask_epi8(STOPS(v, w, _mm_cmpeq_epi8, _mm_set1_epi8));
            if (mask) return j + __builtin_ctz((unsigned)mask);
        }
    } else if (kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS2 *d = (const Py_UCS2 *)data;
        for (; j + 9 <= lim; j += 8) {
            __m128i v = _mm_loadu_si128((const __m128i *)(d + j)), w = _mm_loadu_si128((const __m128i *)(d + j + 1));
            int mask = _mm_movemask_epi8(STOPS(v, w, _mm_cmpeq_epi16, _mm_set1_epi16));
            if (mask) return j + (__builtin_ctz((unsigned)mask) >> 1);
        }
    }
#undef ANY_OF
#undef PAIR
#undef STOPS
#endif
    for (; j < lim; j++) {
        Py_UCS4 c = at(data, kind, j);
        if (c < 128 && STOP[c]) return j;
    }
    return lim;
}

/* What `_line` would do with a cleaned line: only store it as the pending bar (REDRAW), only close a metrics block
 * (BLANK), possibly open one (STAR: its first character is ``*``), or anything (0). */
enum { SHAPE_OTHER = 0, SHAPE_REDRAW = 1, SHAPE_BLANK = 2, SHAPE_STAR = 4 };

#define LIT(s) s, (Py_ssize_t)(sizeof(s) - 1)

/* The shape of s[0:n] (an already cleaned line); *any: it holds one of the strings `_line` looks for before an HF
 * dict (``%|``, ``|Loss: ``, ``GPU available: ``, ```Trainer.fit` ``). */
static ALWAYS_INLINE int shape_of(const void *s, const int kind, Py_ssize_t n, int *any) {
    int pct = 0, eq = 0, other = 0, blank = 1;
    Py_ssize_t k = 0;
    while (k < n && Py_UNICODE_ISSPACE(at(s, kind, k))) k++;  /* the blanks it starts with */
    if (k < n) blank = 0;
    for (; (k = to_stop(s, kind, k, n)) < n; k++) {
        Py_UCS4 c = at(s, kind, k);
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
    *any = pct || other;
    if (blank) return SHAPE_BLANK;
    if (pct && !eq && !other) return SHAPE_REDRAW;
    return (n > 0 && at(s, kind, 0) == '*') ? SHAPE_STAR : SHAPE_OTHER;
}

/* `clean` of s[0:n] into out (room for n characters of the same kind): ``\x1b[`` then digits, ``;`` or ``?`` then an
 * ASCII letter, and backspaces, removed left to right as re.sub does. The cleaned length. */
static ALWAYS_INLINE Py_ssize_t clean_into(const void *s, const int kind, Py_ssize_t n, void *out) {
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
        if (kind == PyUnicode_1BYTE_KIND) ((Py_UCS1 *)out)[m++] = (Py_UCS1)c;
        else if (kind == PyUnicode_2BYTE_KIND) ((Py_UCS2 *)out)[m++] = (Py_UCS2)c;
        else ((Py_UCS4 *)out)[m++] = c;
    }
    return m;
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
 * line), into *spans (room for *room, grown with PyMem_Realloc; *count of them): 1, or 0 for any other line, -1
 * out of memory.
 * _HF_PAIR's finditer on such a line finds exactly these pairs: a match starts at a quote; the key's greedy run stops
 * at its closing quote; the value's greedy first try is the whole number, and the closing quote and the ``,`` or
 * ``}`` after it let it stand; the next search starts at the ``, `` before the next key's quote. */
static int hf_spans(const void *s, const int kind, Py_ssize_t n, Span **spans, Py_ssize_t *room,
                    Py_ssize_t *count) {
    Py_ssize_t k = 1;
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
        if (*count == *room) {
            *room = *room ? 2 * *room : 8;
            Span *grown = PyMem_Realloc(*spans, sizeof(Span) * (size_t)*room);
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
    char *end = buf + (v_end - v);
    double x;
    if (!fast_double(buf, end, &x))  /* _cfloat.h: float()'s double without the general parser, else the parser */
        x = PyOS_string_to_double(buf, &end, NULL);
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
    Py_ssize_t n = PyUnicode_GET_LENGTH(line), count, room = 0;
    Span *spans = NULL;
    int r;
    switch (kind) {
    case PyUnicode_1BYTE_KIND:
        r = hf_spans(data, PyUnicode_1BYTE_KIND, n, &spans, &room, &count);
        break;
    case PyUnicode_2BYTE_KIND:
        r = hf_spans(data, PyUnicode_2BYTE_KIND, n, &spans, &room, &count);
        break;
    default:
        r = hf_spans(data, PyUnicode_4BYTE_KIND, n, &spans, &room, &count);
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
            PyObject *arr = PyTuple_GET_ITEM(arrays, 5 * i + a);
            if (Py_TYPE(arr) == ROOM_ARRAY) room_reserve(arr, Py_SIZE(arr) + 1);  /* doubled, not by a sixteenth */
            PyObject *r = PyObject_CallMethodOneArg(arr, append, put[a]);
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
static int plain_bar_at(const void *s, const int kind, Py_ssize_t n, long long *pos_out, long long *total_out) {
    Py_ssize_t k = 0, q;
    while (k < n && at(s, kind, k) == ' ') k++;
    if (digits_at(s, kind, &k, n, 3) < 0 || !starts(s, kind, k, n, LIT("%|"))) return 0;
    for (q = k += 2; k < n && k - q <= 200 && at(s, kind, k) != '|'; k++) {}
    if (k >= n || k - q > 200) return 0;
    for (q = ++k; k < n && at(s, kind, k) == ' '; k++) {}
    if (k - q > 4) return 0;
    long long pos = digits_at(s, kind, &k, n, 15);
    if (pos < 0 || k >= n || at(s, kind, k) != '/') return 0;
    k++;
    long long total = digits_at(s, kind, &k, n, 15);
    if (total < 0) return 0;
    for (q = k; k < n && at(s, kind, k) == ' '; k++) {}
    if (k - q > 4 || k >= n || at(s, kind, k) != '[') return 0;
    int commas = 0;
    for (q = ++k; k < n && k - q <= 2000 && at(s, kind, k) != ']'; k++)
        if (at(s, kind, k) == ',' && k + 1 < n && at(s, kind, k + 1) == ' ') {
            if (++commas > 1) return 0;  /* a postfix: the regex path reads its pairs */
            k++;
        }
    if (k >= n || k - q > 2000 || at(s, kind, k) != ']') return 0;
    *pos_out = pos;
    *total_out = total;
    return 1;
}

/* plain_bar_at of s[0:n] as (n, total), or None. */
static PyObject *plain_bar_of(const void *s, const int kind, Py_ssize_t n) {
    long long pos, total;
    if (!plain_bar_at(s, kind, n, &pos, &total)) Py_RETURN_NONE;
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

/* ---- the HF dict's step, over the reader's state ----------------------------------------------------------- */

#define EPOCHS 16  /* the recent dicts' epochs `_hf_lag` keeps */

/* The names of the _State fields (and facts) read and set here, interned at the module's import. */
enum { N_MODE, N_INDEX_EPOCHS, N_BAR_TOTAL, N_BAR_POS, N_BAR_OFFSET, N_TRAIN_INDEX, N_DICTS, N_BAR_STEP, N_SPE,
       N_LAST, N_EPOCHS, N_PENDING, N_STEP, N_F_DICTS, N_F_LAST, N_APPEND, N_NAMES };
static const char *const NAME_TEXT[N_NAMES] = {
    "hf_mode", "hf_index_epochs", "bar_total", "bar_pos", "bar_offset", "hf_train_index", "hf_dicts", "bar_step",
    "hf_spe", "hf_last", "hf_epochs", "pending_bar", "step", "hf_train_dicts", "last_step", "append"};
static PyObject *NAME[N_NAMES];

/* The fields of TextStdoutReader's _State that an HF dict's step reads and sets, as C values: loaded from the state
 * when a dict first needs them, written back before any Python code runs again (`hf_sync`). */
typedef struct {
    PyObject *st, *facts;  /* borrowed; facts NULL for `hf_lag`, which sets none */
    int loaded, ok, set_step, set_dicts, set_last, has_bar_step, has_last, n_epochs;
    long long bar_total, bar_pos, bar_offset, train_index, dicts;
    double bar_step, step, spe, last_step, last_ep, last_fact;
    double lo[EPOCHS + 1], hi[EPOCHS + 1], bar[EPOCHS + 1];
    PyObject *pending;  /* st.pending_bar: a str, or NULL for None (a reference held) */
} HF;

/* The attribute name of st as a long long in *out: 1, 0 when it is not an int a long long holds, -1 on an error. */
static int get_ll(PyObject *st, int name, long long *out) {
    PyObject *v = PyObject_GetAttr(st, NAME[name]);
    if (v == NULL) return -1;
    int overflow = 0;
    *out = PyLong_CheckExact(v) ? PyLong_AsLongLongAndOverflow(v, &overflow) : 0;
    int ok = PyLong_CheckExact(v) && !overflow;
    Py_DECREF(v);
    return ok;
}

/* A float (PyFloat exact) into *out: 1, or 0 for anything else. */
static ALWAYS_INLINE int float_in(PyObject *v, double *out) {
    if (!PyFloat_CheckExact(v)) return 0;
    *out = PyFloat_AS_DOUBLE(v);
    return 1;
}

/* st.hf_last ((step, epoch) or None) and st.hf_epochs (a list of at most EPOCHS (low, high, bar)): 1, 0 when not of
 * that shape, -1 on an error. */
static int load_recent(HF *h) {
    PyObject *v = PyObject_GetAttr(h->st, NAME[N_LAST]);
    if (v == NULL) return -1;
    h->has_last = v != Py_None;
    int ok = v == Py_None || (PyTuple_CheckExact(v) && PyTuple_GET_SIZE(v) == 2
                              && float_in(PyTuple_GET_ITEM(v, 0), &h->last_step)
                              && float_in(PyTuple_GET_ITEM(v, 1), &h->last_ep));
    Py_DECREF(v);
    if (!ok || (v = PyObject_GetAttr(h->st, NAME[N_EPOCHS])) == NULL) return ok ? -1 : 0;
    ok = PyList_CheckExact(v) && PyList_GET_SIZE(v) <= EPOCHS;
    h->n_epochs = ok ? (int)PyList_GET_SIZE(v) : 0;
    for (int i = 0; ok && i < h->n_epochs; i++) {
        PyObject *t = PyList_GET_ITEM(v, i);
        ok = PyTuple_CheckExact(t) && PyTuple_GET_SIZE(t) == 3 && float_in(PyTuple_GET_ITEM(t, 0), &h->lo[i])
             && float_in(PyTuple_GET_ITEM(t, 1), &h->hi[i]) && float_in(PyTuple_GET_ITEM(t, 2), &h->bar[i]);
    }
    Py_DECREF(v);
    return ok;
}

/* The state's fields into h (strict: only when the fast path may read the dict: the steps' mode decided as the
 * bar's, no places of the count kept, both facts it sets already in the log). h->ok says whether it may. */
static int hf_load(HF *h, int strict) {
    PyObject *v;
    int r;
    h->loaded = 1;
    h->ok = h->set_step = h->set_dicts = h->set_last = 0;
    if (strict) {
        if ((v = PyObject_GetAttr(h->st, NAME[N_MODE])) == NULL) return -1;
        r = PyUnicode_CheckExact(v) && PyUnicode_CompareWithASCIIString(v, "bar") == 0;
        Py_DECREF(v);
        if (!r) return 0;
        if ((v = PyObject_GetAttr(h->st, NAME[N_INDEX_EPOCHS])) == NULL) return -1;
        r = PyList_CheckExact(v) && PyList_GET_SIZE(v) == 0;
        Py_DECREF(v);
        if (!r) return 0;
        for (int f = N_F_DICTS; f <= N_F_LAST; f++)
            if ((r = PyDict_Contains(h->facts, NAME[f])) <= 0) return r;
    }
    const int ints[] = {N_BAR_TOTAL, N_BAR_POS, N_BAR_OFFSET, N_TRAIN_INDEX, N_DICTS};
    long long *into[] = {&h->bar_total, &h->bar_pos, &h->bar_offset, &h->train_index, &h->dicts};
    for (int i = 0; i < 5; i++)
        if ((r = get_ll(h->st, ints[i], into[i])) <= 0) return r;
    if ((v = PyObject_GetAttr(h->st, NAME[N_BAR_STEP])) == NULL) return -1;
    h->has_bar_step = v != Py_None;
    r = v == Py_None || float_in(v, &h->bar_step);
    Py_DECREF(v);
    if (!r || (v = PyObject_GetAttr(h->st, NAME[N_SPE])) == NULL) return r ? -1 : 0;
    r = float_in(v, &h->spe);
    Py_DECREF(v);
    if (!r || (r = load_recent(h)) <= 0) return r;
    if ((v = PyObject_GetAttr(h->st, NAME[N_PENDING])) == NULL) return -1;
    if (v != Py_None && !PyUnicode_CheckExact(v)) {
        Py_DECREF(v);
        return 0;
    }
    Py_XSETREF(h->pending, v == Py_None ? NULL : v);
    if (v == Py_None) Py_DECREF(v);
    h->ok = 1;
    return 1;
}

/* A float's attribute set (a new float, or None when has is 0). */
static int set_float(PyObject *st, int name, int has, double x) {
    PyObject *v = has ? PyFloat_FromDouble(x) : Py_NewRef(Py_None);
    int r = v == NULL ? -1 : PyObject_SetAttr(st, NAME[name], v);
    Py_XDECREF(v);
    return r;
}

/* hf_last and hf_epochs written back (a new list, as a resume's cut makes one: a snapshot copies the state). */
static int sync_recent(HF *h) {
    PyObject *last = h->has_last ? Py_BuildValue("(dd)", h->last_step, h->last_ep) : Py_NewRef(Py_None);
    int r = last == NULL ? -1 : PyObject_SetAttr(h->st, NAME[N_LAST], last);
    Py_XDECREF(last);
    PyObject *epochs = r < 0 ? NULL : PyList_New(h->n_epochs);
    for (int i = 0; epochs != NULL && i < h->n_epochs; i++) {
        PyObject *t = Py_BuildValue("(ddd)", h->lo[i], h->hi[i], h->bar[i]);
        if (t == NULL) Py_CLEAR(epochs);
        else PyList_SET_ITEM(epochs, i, t);
    }
    r = epochs == NULL ? -1 : PyObject_SetAttr(h->st, NAME[N_EPOCHS], epochs);
    Py_XDECREF(epochs);
    return r;
}

/* The loaded fields written back to the state (and the facts the dicts set), before Python reads it again; the
 * next dict loads them anew. */
static int hf_sync(HF *h) {
    if (!h->loaded) return 0;
    h->loaded = 0;
    int r = 0;
    if (h->ok) {
        const int ints[] = {N_BAR_TOTAL, N_BAR_POS, N_BAR_OFFSET, N_TRAIN_INDEX, N_DICTS};
        const long long vals[] = {h->bar_total, h->bar_pos, h->bar_offset, h->train_index, h->dicts};
        for (int i = 0; r == 0 && i < 5; i++) {
            PyObject *v = PyLong_FromLongLong(vals[i]);
            r = v == NULL ? -1 : PyObject_SetAttr(h->st, NAME[ints[i]], v);
            Py_XDECREF(v);
        }
        if (r == 0) r = set_float(h->st, N_BAR_STEP, h->has_bar_step, h->bar_step);
        if (r == 0) r = set_float(h->st, N_SPE, 1, h->spe);
        if (r == 0 && h->set_step) r = set_float(h->st, N_STEP, 1, h->step);
        if (r == 0) r = PyObject_SetAttr(h->st, NAME[N_PENDING], h->pending != NULL ? h->pending : Py_None);
        if (r == 0) r = sync_recent(h);
        PyObject *v = NULL;
        if (r == 0 && h->set_dicts)
            r = (v = PyLong_FromLongLong(h->dicts)) == NULL ? -1 : PyDict_SetItem(h->facts, NAME[N_F_DICTS], v);
        Py_XDECREF(v);
        v = NULL;
        if (r == 0 && h->set_last)
            r = (v = PyFloat_FromDouble(h->last_fact)) == NULL ? -1 : PyDict_SetItem(h->facts, NAME[N_F_LAST], v);
        Py_XDECREF(v);
    }
    Py_CLEAR(h->pending);
    return r;
}

/* Python's round() of a float, half to even, as a float. */
static ALWAYS_INLINE double round_even(double x) {
    double r = round(x);
    return fabs(x - r) == 0.5 ? 2.0 * round(x / 2.0) : r;
}

/* Whether spe steps per epoch make every kept epoch a whole step no step behind its bar (`_hf_lag`'s all()). */
static ALWAYS_INLINE int fits(const HF *h, long long spe) {
    for (int i = 0; i < h->n_epochs; i++) {
        double top = floor(h->hi[i] * (double)spe);
        if (!(top >= ceil(h->lo[i] * (double)spe) && top >= h->bar[i])) return 0;
    }
    return 1;
}

/* TextStdoutReader._hf_lag, step for step: the epoch (has: an epoch pair; ep: float() of its text, dec: its digits
 * after the point, quoted: 5.x's quoted value), the bar's step, an evaluation dict or not. The arithmetic is the
 * Python's in the same order (compiled without contracting a multiply-add: setup.py), so the floats are its own. */
static double hf_lag(HF *h, int has, double ep, Py_ssize_t dec, int quoted, double step, int is_eval) {
    if (!has || !(0 < ep && ep < Py_HUGE_VAL) || h->spe < 0) return step;
    double half = quoted ? 0.5 * pow(10.0, floor(log10(ep)) - 3) + 1e-12 : 0.5 * pow(10.0, -(double)dec) + 1e-12;
    double lo = ep - half, hi = ep + half;
    h->lo[h->n_epochs] = lo, h->hi[h->n_epochs] = hi, h->bar[h->n_epochs] = step;
    if (++h->n_epochs > EPOCHS) {  /* the 16 last are kept */
        memmove(h->lo, h->lo + 1, sizeof(double) * EPOCHS);
        memmove(h->hi, h->hi + 1, sizeof(double) * EPOCHS);
        memmove(h->bar, h->bar + 1, sizeof(double) * EPOCHS);
        h->n_epochs = EPOCHS;
    }
    long long spe = (long long)h->spe, limit = (h->bar_total > 1 ? h->bar_total : 1) * 4 + 64;
    if (spe < 1) spe = 1;
    double top;
    if (!(spe <= limit && (top = floor(hi * (double)spe)) >= step && top >= ceil(lo * (double)spe)))
        while (spe <= limit && !fits(h, spe)) spe++;
    if (spe > limit) {
        h->spe = -1.0;
        return step;
    }
    h->spe = (double)spe;
    if (2 * half * (double)spe < 1) {
        double r = round_even(ep * (double)spe);
        if (r > step) step = r;
    }
    if (!is_eval) {
        if (h->has_last && step <= h->last_step && ep > h->last_ep) step = h->last_step + 1;
        h->has_last = 1, h->last_step = step, h->last_ep = ep;
    }
    return step;
}

/* float() of an ASCII number is_number accepted, s[v:v_end]. */
static double double_of(const void *s, const int kind, Py_ssize_t v, Py_ssize_t v_end) {
    char small[64], *buf = v_end - v < 64 ? small : PyMem_Malloc((size_t)(v_end - v + 1));
    if (buf == NULL) {
        PyErr_NoMemory();
        return -1.0;
    }
    for (Py_ssize_t q = v; q < v_end; q++) buf[q - v] = (char)at(s, kind, q);
    buf[v_end - v] = '\0';
    double x;
    if (!fast_double(buf, buf + (v_end - v), &x)) x = PyOS_string_to_double(buf, NULL, NULL);
    if (buf != small) PyMem_Free(buf);
    return x;
}

/* The digits after the point of the number s[v:v_end] (`len(epoch.split(".")[1])`, 0 without a point). */
static Py_ssize_t decimals(const void *s, const int kind, Py_ssize_t v, Py_ssize_t v_end) {
    Py_ssize_t q = v;
    while (q < v_end && at(s, kind, q) != '.') q++;
    if (q == v_end) return 0;
    Py_ssize_t e = ++q;
    while (e < v_end && at(s, kind, e) != '.') e++;
    return e - q;
}

PyDoc_STRVAR(hf_lag_doc,
"hf_lag(st, m, step, is_eval) -> float\n\n"
"TextStdoutReader._hf_lag(st, m, step, is_eval) as the compiled pass computes it over the state's fields (the\n"
"tests hold the two to each other): the step, st's steps per epoch, recent epochs and last dict updated.");

static PyObject *hf_lag_py(PyObject *self, PyObject *args) {
    PyObject *st, *m;
    double step;
    int is_eval;
    if (!PyArg_ParseTuple(args, "OOdp", &st, &m, &step, &is_eval)) return NULL;
    HF h = {.st = st};
    int r = hf_load(&h, 0);
    if (r <= 0) {
        Py_CLEAR(h.pending);
        if (r == 0) PyErr_SetString(PyExc_TypeError, "hf_lag: a _State's fields");
        return NULL;
    }
    int has = m != Py_None, quoted = 0;
    double ep = 0.0;
    Py_ssize_t dec = 0;
    if (has) {
        PyObject *text;
        if (!PyTuple_Check(m) || PyTuple_GET_SIZE(m) != 3 || !PyUnicode_Check(text = PyTuple_GET_ITEM(m, 1))) {
            Py_CLEAR(h.pending);
            PyErr_SetString(PyExc_TypeError, "hf_lag: m is (key, value, quoted) or None");
            return NULL;
        }
        quoted = PyObject_IsTrue(PyTuple_GET_ITEM(m, 2));
        PyObject *x = PyFloat_FromString(text);
        if (x == NULL) PyErr_Clear();  /* float() raising: 0.0, as _hf_lag's except */
        ep = x != NULL ? PyFloat_AS_DOUBLE(x) : 0.0;
        Py_XDECREF(x);
        dec = decimals(PyUnicode_DATA(text), PyUnicode_KIND(text), 0, PyUnicode_GET_LENGTH(text));
    }
    step = hf_lag(&h, has, ep, dec, quoted, step, is_eval);
    if (hf_sync(&h) < 0) return NULL;
    return PyFloat_FromDouble(step);
}

/* ---- the line pass ----------------------------------------------------------------------------------------- */

/* The bytes of the points waiting for one array (a reference held): appended with frombytes when Python is next
 * to run (a method call a point was a fifth of the scan). */
struct Out {
    PyObject *arr;
    char *buf;
    Py_ssize_t n, room, size;  /* size: the bytes of one of its points (8 for d, 4 for I) */
};

/* A set of an HF dict's keys (a tuple, references held), what by_keys holds for it (its series, and their arrays:
 * five a key), and the indices of the Outs of each key's steps, values and lines (batched 0 when an array is not of
 * the types Series makes: its points then go through append). */
typedef struct {
    PyObject *keys, *known;
    Py_ssize_t *slot, slot_room;
    int batched;
} Known;

#define OLD_KEYS 3

typedef struct {
    PyObject *text, *line_at, *st, *by_keys;
    void *buf, *bar_buf;  /* a cleaned line, a cleaned redraw (of the text's kind) */
    Py_ssize_t max_line;
    /* the pending redraw not yet handed back: its start in the text, its length (truncated), its line number */
    Py_ssize_t pend_start, pend_n, pend_no;
    int pend_dirty, maybe_block;
    /* the points read here, waiting for their arrays (`flush_points`): one Out an array */
    struct Out *outs;
    Py_ssize_t n_outs, outs_room;
    /* the last HF dict's keys, what by_keys holds for them and their slots; those of the sets of keys seen before
     * it (an evaluation dict's between train dicts) */
    Known cur, old[OLD_KEYS];
    Span *spans;
    Py_ssize_t room;
    HF hf;
} Pass;

/* The cleaned line text[start:start+n], a new reference. */
static ALWAYS_INLINE PyObject *line_of(Pass *p, const void *data, const int kind, Py_ssize_t start, Py_ssize_t n,
                                       int dirty) {
    if (dirty) {
        Py_ssize_t m = clean_into((const char *)data + start * kind, kind, n, p->buf);
        return PyUnicode_FromKindAndData(kind, p->buf, m);
    }
    return PyUnicode_Substring(p->text, start, start + n);
}

/* The points waiting, appended to their arrays (`array.frombytes`), before Python reads the series. */
static int flush_points(Pass *p) {
    static PyObject *frombytes = NULL;
    if (frombytes == NULL && (frombytes = PyUnicode_InternFromString("frombytes")) == NULL) return -1;
    for (Py_ssize_t i = 0; i < p->n_outs; i++) {
        struct Out *o = &p->outs[i];
        if (o->n == 0) continue;
        if (Py_TYPE(o->arr) == ROOM_ARRAY)  /* doubled, not by a sixteenth (_croom.h) */
            room_reserve(o->arr, Py_SIZE(o->arr) + o->n / o->size);
        PyObject *view = PyMemoryView_FromMemory(o->buf, o->n, PyBUF_READ);
        PyObject *got = view == NULL ? NULL : PyObject_CallMethodOneArg(o->arr, frombytes, view);
        Py_XDECREF(view);
        if (got == NULL) return -1;
        Py_DECREF(got);
        o->n = 0;
    }
    return 0;
}

/* The array's Out (made when new). */
static struct Out *out_of(Pass *p, PyObject *arr) {
    for (Py_ssize_t i = 0; i < p->n_outs; i++)
        if (p->outs[i].arr == arr) return &p->outs[i];
    if (p->n_outs == p->outs_room) {
        Py_ssize_t room = p->outs_room ? 2 * p->outs_room : 32;
        struct Out *grown = PyMem_Realloc(p->outs, sizeof(struct Out) * (size_t)room);
        if (grown == NULL) return NULL;
        p->outs = grown;
        p->outs_room = room;
    }
    struct Out *o = &p->outs[p->n_outs++];
    *o = (struct Out){Py_NewRef(arr), NULL, 0, 0, 0};
    return o;
}

/* The current set of keys' slots (m keys). */
static int known_slots(Pass *p, Py_ssize_t m) {
    PyObject *arrays = PyTuple_GET_ITEM(p->cur.known, 1);
    p->cur.batched = 0;
    for (Py_ssize_t j = 0; j < m; j++)
        if (!array_of(PyTuple_GET_ITEM(arrays, 5 * j), "d", 8) || !array_of(PyTuple_GET_ITEM(arrays, 5 * j + 1), "d", 8)
            || !array_of(PyTuple_GET_ITEM(arrays, 5 * j + 2), "I", 4))
            return 0;
    if (3 * m > p->cur.slot_room) {
        Py_ssize_t *grown = PyMem_Realloc(p->cur.slot, sizeof(Py_ssize_t) * (size_t)(3 * m));
        if (grown == NULL) return -1;
        p->cur.slot = grown;
        p->cur.slot_room = 3 * m;
    }
    for (Py_ssize_t q = 0; q < 3 * m; q++) {  /* indices: out_of may move the Outs */
        struct Out *o = out_of(p, PyTuple_GET_ITEM(arrays, 5 * (q / 3) + q % 3));
        if (o == NULL) return -1;
        o->size = q % 3 == 2 ? 4 : 8;  /* as array_of checked: steps and values d, lines I */
        p->cur.slot[q] = o - p->outs;
    }
    p->cur.batched = 1;
    return 0;
}

/* size bytes at x onto the Out. */
static ALWAYS_INLINE int put(struct Out *o, const void *x, Py_ssize_t size) {
    if (o->n + size > o->room) {
        Py_ssize_t room = o->room ? 2 * o->room : 1024;
        char *grown = PyMem_Realloc(o->buf, (size_t)room);
        if (grown == NULL) return -1;
        o->buf = grown;
        o->room = room;
    }
    memcpy(o->buf + o->n, x, (size_t)size);
    o->n += size;
    return 0;
}

/* The Outs and sets of keys let go (their points flushed or dropped with an error). */
static void free_outs(Pass *p) {
    for (Py_ssize_t i = 0; i < p->n_outs; i++) {
        Py_DECREF(p->outs[i].arr);
        PyMem_Free(p->outs[i].buf);
    }
    PyMem_Free(p->outs);
    for (int c = -1; c < OLD_KEYS; c++) {
        Known *k = c < 0 ? &p->cur : &p->old[c];
        Py_XDECREF(k->keys);
        Py_XDECREF(k->known);
        PyMem_Free(k->slot);
    }
}

/* `line_at(line, no, st)` on the cleaned line text[start:start+n], the state synced first; bar (a reference it
 * takes) is the redraw right before the line, made the pending bar first, or NULL. */
static int emit(Pass *p, const void *data, const int kind, Py_ssize_t start, Py_ssize_t n, int dirty, Py_ssize_t no,
                PyObject *bar) {
    PyObject *line = line_of(p, data, kind, start, n, dirty);
    PyObject *num = line == NULL ? NULL : PyLong_FromSsize_t(no);
    int r = num == NULL || flush_points(p) < 0 || hf_sync(&p->hf) < 0 ? -1 : 0;
    if (r == 0 && bar != NULL) r = PyObject_SetAttr(p->st, NAME[N_PENDING], bar);
    if (r == 0) {
        PyObject *args[3] = {line, num, p->st};
        PyObject *got = PyObject_Vectorcall(p->line_at, args, 3, NULL);
        r = got == NULL ? -1 : 0;
        Py_XDECREF(got);
    }
    Py_XDECREF(line);
    Py_XDECREF(num);
    Py_XDECREF(bar);
    return r;
}

/* The chunk's last pending redraw, handed back as a line of its own. */
static ALWAYS_INLINE int flush_pending(Pass *p, const void *data, const int kind) {
    if (p->pend_start < 0) return 0;
    Py_ssize_t start = p->pend_start;
    p->pend_start = -1;
    return emit(p, data, kind, start, p->pend_n, p->pend_dirty, p->pend_no, NULL);
}

/* The str key is the characters s[a:b]. */
static ALWAYS_INLINE int same_key(PyObject *key, const void *s, const int kind, Py_ssize_t a, Py_ssize_t b) {
    if (PyUnicode_GET_LENGTH(key) != b - a) return 0;
    const void *kd = PyUnicode_DATA(key);
    const int kk = PyUnicode_KIND(key);
    if (kk == kind) return memcmp(kd, (const char *)s + a * kind, (size_t)((b - a) * kind)) == 0;
    unsigned diff = 0;  /* no early exit: the compiler reads several at a time */
    if (kk == PyUnicode_1BYTE_KIND && kind == PyUnicode_2BYTE_KIND) {
        const Py_UCS1 *k1 = kd;
        const Py_UCS2 *s2 = (const Py_UCS2 *)s + a;
        for (Py_ssize_t q = 0; q < b - a; q++) diff |= (unsigned)(k1[q] ^ s2[q]);
        return diff == 0;
    }
    for (Py_ssize_t q = a; q < b; q++)
        if (PyUnicode_READ(kk, kd, q - a) != at(s, kind, q)) return 0;
    return 1;
}

/* The set of keys is the spans' (but `epoch`, m of them). */
static int same_keys(PyObject *keys, const Span *spans, const void *s, const int kind, Py_ssize_t count,
                     Py_ssize_t m) {
    if (keys == NULL || PyTuple_GET_SIZE(keys) != m) return 0;
    for (Py_ssize_t i = 0, j = 0; i < count; i++)
        if (!key_is(s, kind, &spans[i], LIT("epoch"))
            && !same_key(PyTuple_GET_ITEM(keys, j++), s, kind, spans[i].key, spans[i].key_end))
            return 0;
    return 1;
}

/* What by_keys holds for the keys of the spans but `epoch` (m of them; the last dict's or one of the sets before it
 * when they are its keys): 1 with p->cur set, 0 when by_keys has none (the dict's first time: Python makes its
 * series), -1 on an error. */
static int known_keys(Pass *p, const void *s, const int kind, Py_ssize_t count, Py_ssize_t m) {
    const Span *spans = p->spans;
    if (same_keys(p->cur.keys, spans, s, kind, count, m)) return 1;
    for (int c = 0; c < OLD_KEYS; c++)
        if (same_keys(p->old[c].keys, spans, s, kind, count, m)) {
            Known t = p->cur;
            p->cur = p->old[c];
            p->old[c] = t;
            return 1;
        }
    PyObject *keys = PyTuple_New(m);
    for (Py_ssize_t i = 0, j = 0; keys != NULL && i < count; i++) {
        if (key_is(s, kind, &spans[i], LIT("epoch"))) continue;
        PyObject *k = PyUnicode_FromKindAndData(kind, (const char *)s + spans[i].key * kind,
                                                spans[i].key_end - spans[i].key);
        if (k == NULL) Py_CLEAR(keys);
        else PyTuple_SET_ITEM(keys, j++, k);
    }
    PyObject *known = keys == NULL ? NULL : PyDict_GetItemWithError(p->by_keys, keys);
    if (known == NULL || !PyTuple_CheckExact(known) || PyTuple_GET_SIZE(known) != 2
        || !PyTuple_CheckExact(PyTuple_GET_ITEM(known, 1)) || PyTuple_GET_SIZE(PyTuple_GET_ITEM(known, 1)) != 5 * m) {
        Py_XDECREF(keys);
        return PyErr_Occurred() ? -1 : 0;
    }
    Known *last = &p->old[OLD_KEYS - 1];  /* the oldest set let go, the current one kept */
    Py_XDECREF(last->keys);
    Py_XDECREF(last->known);
    PyMem_Free(last->slot);
    memmove(&p->old[1], &p->old[0], sizeof(Known) * (OLD_KEYS - 1));
    p->old[0] = p->cur;
    p->cur = (Known){keys, Py_NewRef(known), NULL, 0, 0};
    return known_slots(p, m) < 0 ? -1 : 1;
}

/* The pending bar `_settle_bar` would read for a dict (the pass's own redraw, else the state's pending_bar) as the
 * plain bar's (pos, total): 1, 0 when there is one plain_bar does not read, 2 when there is none. */
static int bar_to_settle(Pass *p, const void *data, const int kind, long long *pos, long long *total) {
    if (p->pend_start >= 0) {
        if (!p->pend_dirty)
            return plain_bar_at((const char *)data + p->pend_start * kind, kind, p->pend_n, pos, total);
        Py_ssize_t m = clean_into((const char *)data + p->pend_start * kind, kind, p->pend_n, p->bar_buf);
        return plain_bar_at(p->bar_buf, kind, m, pos, total);
    }
    PyObject *b = p->hf.pending;
    if (b == NULL) return 2;
    return plain_bar_at(PyUnicode_DATA(b), PyUnicode_KIND(b), PyUnicode_GET_LENGTH(b), pos, total);
}

/* The dict's points appended to its series' arrays (steps, values, lines; none of them has a wall time or record). */
static int append_points(Pass *p, const void *s, const int kind, Py_ssize_t count, double step, Py_ssize_t no) {
    if (p->cur.batched && no >= 0 && (unsigned long long)no <= 0xFFFFFFFFULL) {  /* the bytes, flushed later */
        const unsigned int line = (unsigned int)no;
        for (Py_ssize_t i = 0, j = 0; i < count; i++) {
            const Span *sp = &p->spans[i];
            if (key_is(s, kind, sp, LIT("epoch"))) continue;
            double v = double_of(s, kind, sp->v, sp->v_end);
            if (v == -1.0 && PyErr_Occurred()) return -1;
            if (put(&p->outs[p->cur.slot[3 * j]], &step, 8) < 0 || put(&p->outs[p->cur.slot[3 * j + 1]], &v, 8) < 0
                || put(&p->outs[p->cur.slot[3 * j + 2]], &line, 4) < 0)
                return (PyErr_NoMemory(), -1);
            j++;
        }
        return 0;
    }
    PyObject *arrays = PyTuple_GET_ITEM(p->cur.known, 1), *put[3] = {PyFloat_FromDouble(step), NULL,
                                                                  PyLong_FromSsize_t(no)};
    int r = put[0] == NULL || put[2] == NULL ? -1 : 0;
    for (Py_ssize_t i = 0, j = 0; r == 0 && i < count; i++) {
        const Span *sp = &p->spans[i];
        if (key_is(s, kind, sp, LIT("epoch"))) continue;
        if ((put[1] = number_of(s, kind, sp->v, sp->v_end)) == NULL) r = -1;
        for (int a = 0; r == 0 && a < 3; a++) {
            PyObject *got = PyObject_CallMethodOneArg(PyTuple_GET_ITEM(arrays, 5 * j + a), NAME[N_APPEND], put[a]);
            r = got == NULL ? -1 : 0;
            Py_XDECREF(got);
        }
        Py_CLEAR(put[1]);
        j++;
    }
    Py_XDECREF(put[0]);
    Py_XDECREF(put[2]);
    return r;
}

/* An HF dict line read here, as `_line` reads it (`_settle_bar` then `_hf_dict`), when every branch it takes is
 * one this holds: the line whole, s[0:n] once cleaned (of the text's kind), of the plain shape `hf_spans` reads,
 * with none of the strings `_line` looks for before it (the caller checked); no `train_runtime` key; its keys'
 * series made (by_keys has them) without wall times or records; the steps' mode the bar's, with no places of the
 * count kept; the bar to settle none or a plain one not larger than the largest seen (else `_bar_position` sets a
 * fact); a bar step after it; an epoch below 1e15 (the floors stay finite). 1 when read, 0 when Python is to read
 * it (nothing changed), -1 on an error. */
static int fast_dict(Pass *p, const void *data, const int kind, const void *s, Py_ssize_t n, Py_ssize_t no) {
    Py_UCS4 c = n > 2 ? at(s, kind, 2) : 0;
    if (n < 3 || at(s, kind, 1) != '\'' || !((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_')) return 0;
    Py_ssize_t count, m = 0, ep_i = -1;
    int r = hf_spans(s, kind, n, &p->spans, &p->room, &count), is_eval = 0;
    if (r <= 0) return r < 0 ? (PyErr_NoMemory(), -1) : 0;
    for (Py_ssize_t i = 0; i < count; i++) {
        const Span *sp = &p->spans[i];
        if (key_is(s, kind, sp, LIT("epoch"))) {
            if (ep_i < 0) ep_i = i;
            continue;
        }
        if (key_is(s, kind, sp, LIT("train_runtime"))) return 0;
        if (starts(s, kind, sp->key, sp->key_end, LIT("eval_"))) is_eval = 1;
        m++;
    }
    if ((r = known_keys(p, s, kind, count, m)) <= 0) return r;
    PyObject *arrays = PyTuple_GET_ITEM(p->cur.known, 1);
    for (Py_ssize_t j = 0; j < m; j++)
        for (int w = 3; w < 5; w++) {
            Py_ssize_t len = PyObject_Size(PyTuple_GET_ITEM(arrays, 5 * j + w));
            if (len != 0) return len < 0 ? -1 : 0;
        }
    HF *h = &p->hf;
    if (!h->loaded && hf_load(h, 1) < 0) return -1;
    if (!h->ok) return 0;
    long long pos = 0, total = 0;
    int bar = bar_to_settle(p, data, kind, &pos, &total);
    if (bar == 0 || (bar == 1 && total > h->bar_total) || !(h->has_bar_step || (bar == 1 && total == h->bar_total)))
        return 0;
    double ep = 0.0;
    Py_ssize_t dec = 0;
    const Span *esp = ep_i >= 0 ? &p->spans[ep_i] : NULL;
    if (esp != NULL) {
        if ((ep = double_of(s, kind, esp->v, esp->v_end)) == -1.0 && PyErr_Occurred()) return -1;
        if (ep > 1e15) return 0;
        dec = decimals(s, kind, esp->v, esp->v_end);
    }
    /* read here from now on: `_settle_bar` (`_bar_position` of a bar no larger than the largest) ... */
    if (bar == 1 && total == h->bar_total) {
        if (pos < h->bar_pos) h->bar_offset = h->bar_pos >= total ? h->bar_offset + total : 0;
        h->bar_pos = pos;
        h->bar_step = (double)(h->bar_offset + pos);
        h->has_bar_step = 1;
    }
    p->pend_start = -1;
    Py_CLEAR(h->pending);
    /* ... then `_hf_dict` in the bar's mode */
    if (!is_eval) {
        h->train_index++;
        h->dicts++;
        h->set_dicts = 1;
    }
    double step = hf_lag(h, esp != NULL, ep, dec, esp != NULL && esp->quoted, h->bar_step, is_eval);
    h->step = step;
    h->set_step = 1;
    if (m == 0) return 1;
    h->last_fact = step;
    h->set_last = 1;
    return append_points(p, s, kind, count, step, no) < 0 ? -1 : 1;
}

/* What scan_line finds of a line: its shape, whether it holds one of the strings `_line` looks for before an HF
 * dict (``%|``, ``|Loss: ``, ``GPU available: ``, ```Trainer.fit` ``: any) */
typedef struct {
    int shape, any;
    int redraw;                     /* ``%|``, no ``=``, none of the strings: the shape a redraw has */
    Py_ssize_t first, last;         /* its first and last escape or backspace (first -1: none) */
} Found;

/* The end of the line that starts at i (the first ``\r`` or ``\n`` from i, or len), in one pass that also gives, in
 * *found, what shape_of gives its first max_line characters, or -1 when one of them is ``\x1b`` or a backspace (the
 * line is then cleaned first and shape_of reads the cleaned text). Within the first max_line characters (lim) the
 * checks are shape_of's: a literal it looks for holds no line break, so it matches within the line exactly when it
 * matches within lim; ``%|``'s ``|`` is no line break either. Past lim only the line break is looked for. */
static ALWAYS_INLINE Py_ssize_t scan_line(const void *data, const int kind, Py_ssize_t i, Py_ssize_t len,
                                          Py_ssize_t max_line, Found *found) {
    Py_ssize_t lim = len - i > max_line ? i + max_line : len, j = i;
    int pct = 0, eq = 0, other = 0, blank = 1, dirty = 0;
    Py_UCS4 c;
    found->first = -1;
    for (; j < lim; j++) {  /* the blanks it starts with: a line of them only (or nothing) is blank */
        c = at(data, kind, j);
        if (c == '\n' || c == '\r') goto end;
        if (!Py_UNICODE_ISSPACE(c)) break;
    }
    if (j < lim) blank = 0;
    for (; (j = to_stop(data, kind, j, lim)) < lim; j++) {
        switch (c = at(data, kind, j)) {
        case '\n':
        case '\r':
            goto end;
        case 0x1b:
        case 0x08:
            if (!dirty) found->first = j;
            found->last = j;
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
    }
    while (j < len && (c = at(data, kind, j)) != '\n' && c != '\r') j++;
end:
    found->any = pct || other;
    found->redraw = pct && !eq && !other;
    if (dirty) found->shape = -1;
    else if (blank) found->shape = SHAPE_BLANK;
    else if (pct && !eq && !other) found->shape = SHAPE_REDRAW;
    else found->shape = (j > i && at(data, kind, i) == '*') ? SHAPE_STAR : SHAPE_OTHER;
    return j;
}

/* The index after the escape or backspace at k (below e) `clean` removes, or -1 when it keeps the character at k. */
static ALWAYS_INLINE Py_ssize_t escape_end(const void *data, const int kind, Py_ssize_t k, Py_ssize_t e) {
    Py_UCS4 c = at(data, kind, k), d = 0;
    if (c == 0x08) return k + 1;
    if (c != 0x1b || k + 1 >= e || at(data, kind, k + 1) != '[') return -1;
    Py_ssize_t q = k + 2;
    while (q < e && (((d = at(data, kind, q)) >= '0' && d <= '9') || d == ';' || d == '?')) q++;
    return q < e && ((d >= 'A' && d <= 'Z') || (d >= 'a' && d <= 'z')) ? q + 1 : -1;
}

/* A line with escapes, text[start:e] (its first max_line characters), that is escapes and backspaces, a core
 * without any, then escapes and backspaces (a bar's redraw ending in a cursor move up, a dict after one): `clean`
 * gives the core, text[*cs:*ce]. The flags the pass found on the raw line are the core's, or more (the characters
 * `clean` removes are none the checks look for but a ``G``, and an escape ending in one can only add a literal:
 * ``\x1b[1GPU available: ``): a line taken for more than a redraw goes to `_line`, which makes it the pending bar
 * all the same, and one holding a literal is no dict read here. 0 for any other line, which is cleaned. */
static ALWAYS_INLINE int core_of(const void *data, const int kind, Py_ssize_t start, Py_ssize_t e, const Found *f,
                                 Py_ssize_t *cs, Py_ssize_t *ce) {
    Py_ssize_t k = start, q;
    if (f->first == start) {  /* escapes first: the core after them, with none after it */
        while (k < e && ((q = at(data, kind, k)) == 0x1b || q == 0x08))
            if ((k = escape_end(data, kind, k, e)) < 0) return 0;
        if (f->last >= k) return 0;
        *cs = k, *ce = e;
        return 1;
    }
    for (k = f->first; k < e; k = q)  /* the core first: escapes only after it */
        if ((q = escape_end(data, kind, k, e)) < 0) return 0;
    *cs = start, *ce = f->first;
    return 1;
}

/* One line, text[start:end] (not empty), numbered no, as scan_line found it (shape -1: to be cleaned first). */
static ALWAYS_INLINE int one_line(Pass *p, const void *data, const int kind, Py_ssize_t start, Py_ssize_t end,
                                  Py_ssize_t no, Found found) {
    Py_ssize_t n = end - start < p->max_line ? end - start : p->max_line, cs, ce;
    const int whole = n == end - start;
    int dirty = found.shape < 0, shape = found.shape, any = found.any;
    Py_ssize_t m = n;  /* the cleaned line's length */
    if (dirty && core_of(data, kind, start, start + n, &found, &cs, &ce)) {  /* the core, as a clean line */
        Py_ssize_t k = cs;
        while (k < ce && Py_UNICODE_ISSPACE(at(data, kind, k))) k++;
        shape = k == ce ? SHAPE_BLANK : found.redraw ? SHAPE_REDRAW : at(data, kind, cs) == '*' ? SHAPE_STAR
                                                                                                 : SHAPE_OTHER;
        start = cs, n = m = ce - cs, dirty = 0;
    } else if (dirty) {
        m = clean_into((const char *)data + start * kind, kind, n, p->buf);
        shape = shape_of(p->buf, kind, m, &any);
    }
    if (shape == SHAPE_REDRAW) {  /* replaces the pending one, which nothing read */
        p->pend_start = start;
        p->pend_n = n;
        p->pend_dirty = dirty;
        p->pend_no = no;
        return 0;
    }
    if (shape == SHAPE_BLANK && !p->maybe_block) return 0;  /* it would close a block that is not open */
    if (shape == SHAPE_OTHER && !any && whole) {  /* an HF dict, whole, read here when it can be */
        const void *s = dirty ? (const void *)p->buf : (const void *)((const char *)data + start * kind);
        int r = m > 0 && at(s, kind, 0) == '{' ? fast_dict(p, data, kind, s, m, no) : 0;
        if (r != 0) return r < 0 ? -1 : 0;
    }
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
        Found found;
        Py_ssize_t j = scan_line(data, kind, i, len, p->max_line, &found);
        if (j > i && one_line(p, data, kind, i, j, no, found) < 0) return -1;
        if (j < len) j += (at(data, kind, j) == '\r' && j + 1 < len && at(data, kind, j + 1) == '\n') ? 2 : 1;
        i = j;
        no++;
    }
    if (flush_pending(p, data, kind) < 0 || flush_points(p) < 0) return -1;
    return hf_sync(&p->hf);
}

PyDoc_STRVAR(stdout_scan_doc,
"stdout_scan(text, first_line, max_line, line_at, st, facts, by_keys) -> None\n\n"
"TextStdoutReader.scan of text: line_at(line, number, st) on each line _line must read, as _line is given it\n"
"(its first max_line characters, colour codes, cursor moves and backspaces removed), but the bar redraws a later\n"
"one replaces, the blank lines that close no metrics block, and the plain HF dicts read here over st's fields\n"
"(their points appended to the arrays by_keys holds for their keys, the facts' hf_train_dicts and last_step set).\n"
"A redraw right before a line _line reads is made st.pending_bar first; the chunk's last one comes as a line.");

static PyObject *stdout_scan(PyObject *self, PyObject *args) {
    PyObject *text, *line_at, *st, *facts, *by_keys;
    Py_ssize_t first, max_line;
    if (!PyArg_ParseTuple(args, "UnnOOO!O!", &text, &first, &max_line, &line_at, &st, &PyDict_Type, &facts,
                          &PyDict_Type, &by_keys))
        return NULL;
    if (max_line < 1) {
        PyErr_SetString(PyExc_ValueError, "max_line must be positive");
        return NULL;
    }
    Py_ssize_t len = PyUnicode_GET_LENGTH(text);
    Pass p = {.text = text, .line_at = line_at, .st = st, .by_keys = by_keys, .max_line = max_line,
              .pend_start = -1, .maybe_block = 1, .hf = {.st = st, .facts = facts}};
    size_t room = sizeof(Py_UCS4) * (size_t)(len < max_line ? (len > 0 ? len : 1) : max_line);
    p.buf = PyMem_Malloc(room);
    p.bar_buf = PyMem_Malloc(room);
    if (p.buf == NULL || p.bar_buf == NULL) {
        PyMem_Free(p.buf);
        PyMem_Free(p.bar_buf);
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
    PyMem_Free(p.bar_buf);
    PyMem_Free(p.spans);
    free_outs(&p);
    Py_XDECREF(p.hf.pending);
    if (r < 0) return NULL;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"stdout_scan", stdout_scan, METH_VARARGS, stdout_scan_doc},
    {"hf_lag", hf_lag_py, METH_VARARGS, hf_lag_doc},
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

PyMODINIT_FUNC PyInit__cstdout(void) {
    if (room_init() < 0) return NULL;
    for (int i = 0; i < N_NAMES; i++)
        if (NAME[i] == NULL && (NAME[i] = PyUnicode_InternFromString(NAME_TEXT[i])) == NULL) return NULL;
    return PyModule_Create(&module);
}
