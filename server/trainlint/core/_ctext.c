/* trainlint's compiled text scanner: the plain lines of Coqui trainer logs, with the reader's Python as the fallback.
 *
 * CoquiReader follows one regex's matches (readers/coqui.py, _MASTER); six of every eight lines are
 * ``| > name: value  (average)`` and most of the rest ``--> TIME: … -- STEP: a/b -- GLOBAL_STEP: g``. This reads
 * those two kinds of line, and only where it is sure the regex would match exactly there and nowhere else on the
 * line: a line of anything else (an epoch, an evaluation header, a checkpoint, an unknown key, a number float()
 * would strip or refuse, a lone carriage return, a byte outside ASCII) stops it, and the Python loop reads that
 * line with the regex, so both paths give identical series by construction (tests/test_compiled_scanner.py holds
 * them to it on every real log).
 *
 * Its own extension module (not _cscan.c) so that each scanner can be built, and fall back, on its own.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <float.h>
#include <limits.h>
#include <string.h>

#define CFLOAT_STRICT
#include "_cfloat.h"

/* ---- growable buffers, flushed into array.array objects --------------------------------------------------- */

#include "_cgrow.h"

/* grow_put with its common case inline, room in the buffer (a macro: the compiler did not inline the function,
 * and a value line puts seven items): 0, or -1 without memory. */
#define put(g, item, size)                                                                           \
    ((g)->len + (size) <= (g)->cap ? (memcpy((g)->data + (g)->len, (item), (size)), (g)->len += (size), 0) \
                                   : grow_put((g), (item), (size)))

/* ---- Coqui lines ------------------------------------------------------------------------------------------- */

enum { MODE_NONE = 0, MODE_TRAIN = 1, MODE_EVAL_PENDING = 2, MODE_EVAL = 3 };

/* 1 when a match of _MASTER could start at s[q] (e: the line's end): every alternative begins with ``--> `` and
 * T, S or E, ``| > ``, ``> `` and E, T, B, C, K or M, ``! R`` or, at a line's start, ``Traceback``. 0: none can (a safe over-estimate
 * of the regex, which only ever makes the scanner leave a line to it). */
static int could_start(const unsigned char *s, Py_ssize_t q, Py_ssize_t e, Py_ssize_t line_start) {
    switch (s[q]) {
    case '|':
        return e - q >= 4 && memcmp(s + q, "| > ", 4) == 0;
    case '>':  /* > EPOCH, EVALUATION, TRAINING, BEST MODEL, CHECKPOINT, Keyboard, Model restored */
        return e - q >= 3 && s[q + 1] == ' ' && strchr("ETBCKM", s[q + 2]) != NULL && s[q + 2] != '\0';
    case '!':  /* ! Run is kept */
        return e - q >= 3 && s[q + 1] == ' ' && s[q + 2] == 'R';
    case '-':
        return e - q >= 5 && memcmp(s + q, "--> ", 4) == 0 && (s[q + 4] == 'T' || s[q + 4] == 'S' || s[q + 4] == 'E');
    case 'T':
        return q == line_start;
    default:
        return 0;
    }
}

/* 1 when no match can start in s[k:e] (k past the line's start). */
static int no_match_in(const unsigned char *s, Py_ssize_t k, Py_ssize_t e, Py_ssize_t line_start) {
    for (; k < e; k++)
        if (could_start(s, k, e, line_start)) return 0;
    return 1;
}

/* Byte classes, filled when the module loads (a table lookup a character: the key and number loops ran a
 * chain of compares per byte). WORD: \\w among ASCII; NUM: num_char. */
static unsigned char WORD[256], NUM[256];

static int is_word(unsigned char c) { return WORD[c]; }

/* A character of ``[^\s\x1b(]`` among ASCII; 0 for any other byte (where \\s and float() differ: the line is
 * left to the regex). */
static int num_char_of(unsigned char c) {
    return c < 0x80 && !((c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f) || c == ' ' || c == 0x1b || c == '(');
}

static int num_char(unsigned char c) { return NUM[c]; }

static void init_classes(void) {
    for (int c = 0; c < 256; c++) {
        WORD[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
        NUM[c] = (unsigned char)num_char_of((unsigned char)c);
    }
}

/* ``(?:\x1b\[[\d;]*m)*`` from s[*k]: 0 when an escape character starts something else (the regex would fail). */
static int skip_escapes(const unsigned char *s, Py_ssize_t e, Py_ssize_t *k) {
    while (*k < e && s[*k] == 0x1b) {
        Py_ssize_t q = *k + 1;
        if (q >= e || s[q] != '[') return 0;
        for (q++; q < e && ((s[q] >= '0' && s[q] <= '9') || s[q] == ';'); q++) {
        }
        if (q >= e || s[q] != 'm') return 0;
        *k = q + 1;
    }
    return 1;
}

/* 1 to 15 ASCII digits at s[*k] not followed by another: their value; -1 otherwise. */
static long long digits15(const unsigned char *s, Py_ssize_t e, Py_ssize_t *k) {
    long long v = 0;
    int n = 0;
    while (*k < e && s[*k] >= '0' && s[*k] <= '9') {
        if (++n > 15) return -1;
        v = v * 10 + (s[(*k)++] - '0');
    }
    return n ? v : -1;
}

static long long floordiv(long long a, long long b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

/* coqui.py's _wall of a stamp ``YYYY-MM-DD hh:mm:ss`` (digits checked): seconds, local time read as UTC. */
static double wall_of(const unsigned char *t) {
#define D2(i) ((t[i] - '0') * 10 + (t[(i) + 1] - '0'))
    long long y = D2(0) * 100 + D2(2), m = D2(5), d = D2(8);
    long long secs = D2(11) * 3600 + D2(14) * 60 + D2(17);
#undef D2
    y -= m <= 2;
    long long era = floordiv(y >= 0 ? y : y - 399, 400);
    long long yoe = y - era * 400;
    long long doy = floordiv(153 * (m + (m > 2 ? -3 : 9)) + 2, 5) + d - 1;
    long long doe = yoe * 365 + floordiv(yoe, 4) - floordiv(yoe, 100) + doy;
    return (double)((era * 146097 + doe - 719468) * 86400 + secs);
}

static const char STAMP[] = "dddd-dd-dd dd:dd:dd";

/* A step header from s[k] (just after ``--> ``): 1 and the fields set, 0 when the regex must read the line. */
static int step_header(const unsigned char *s, Py_ssize_t e, Py_ssize_t k, long long *local, long long *total,
                       long long *gstep, double *wall) {
    *wall = Py_NAN;
    if (e - k >= 6 && memcmp(s + k, "TIME: ", 6) == 0) {
        k += 6;
        if (e - k < 23) return 0;
        for (int i = 0; i < 19; i++)
            if (STAMP[i] == 'd' ? !(s[k + i] >= '0' && s[k + i] <= '9') : s[k + i] != STAMP[i]) return 0;
        if (memcmp(s + k + 19, " -- ", 4) != 0) return 0;
        *wall = wall_of(s + k);
        k += 23;
    }
    if (e - k < 6 || memcmp(s + k, "STEP: ", 6) != 0) return 0;
    k += 6;
    if ((*local = digits15(s, e, &k)) < 0 || k >= e || s[k++] != '/') return 0;
    if ((*total = digits15(s, e, &k)) < 0) return 0;
    if (e - k < 17 || memcmp(s + k, " -- GLOBAL_STEP: ", 17) != 0) return 0;
    k += 17;
    if ((*gstep = digits15(s, e, &k)) < 0) return 0;
    return no_match_in(s, k, e, -1);  /* nothing after it that could start another match */
}

/* Python's str.strip() whitespace among ASCII bytes. */
static int is_py_space(unsigned char c) { return c == ' ' || (c >= '\t' && c <= '\r') || (c >= 0x1c && c <= 0x1f); }

typedef struct {
    Py_ssize_t key, key_len, num, num_len, paren, paren_len;  /* paren_len -1: no parenthesised part */
} Value;

/* ``| > key: value (paren)`` from s[k] (just after ``| > ``) to the line's end e, as the regex's ``val`` reads it;
 * 0 when it would not match there. */
static int value_line(const unsigned char *s, Py_ssize_t e, Py_ssize_t k, Value *v) {
    if (k >= e || !(is_word(s[k]) && !(s[k] >= '0' && s[k] <= '9'))) return 0;
    v->key = k;
    while (k < e && (is_word(s[k]) || s[k] == '.')) k++;
    v->key_len = k - v->key;
    if (k >= e || s[k++] != ':' || !skip_escapes(s, e, &k)) return 0;
    while (k < e && (s[k] == ' ' || s[k] == '\t')) k++;
    v->num = k;
    while (k < e && num_char(s[k])) k++;
    if ((v->num_len = k - v->num) == 0) return 0;
    while (k < e && (s[k] == ' ' || s[k] == '\t')) k++;
    if (!skip_escapes(s, e, &k)) return 0;
    v->paren = 0;
    v->paren_len = -1;
    Py_ssize_t q = k;
    while (q < e && (s[q] == ' ' || s[q] == '\t')) q++;
    if (q < e && s[q] == '(') {
        const unsigned char *close = memchr(s + q + 1, ')', (size_t)(e - q - 1));
        if (close != NULL) {
            v->paren = q + 1;
            v->paren_len = (close - s) - v->paren;
            k = (close - s) + 1;
        }
    }
    while (k < e && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r')) k++;
    return k == e;
}

typedef struct {
    const char **names;
    Py_ssize_t *lens, n, hint;
} Keys;

/* The index of the key s[k:k+len] among the chunk's known keys (they come in the same order every block:
 * the one after the last found is tried first); -1: unknown (the Python path makes its series). */
static Py_ssize_t find_key(Keys *ks, const unsigned char *p, Py_ssize_t len) {
    for (Py_ssize_t t = 0; t < ks->n; t++) {
        Py_ssize_t i = (ks->hint + t) % ks->n;
        const char *name = ks->names[i];
        if (ks->lens[i] == len && (len == 0 || (name[0] == (char)p[0] && memcmp(name, p, (size_t)len) == 0))) {
            ks->hint = i + 1;
            return i;
        }
    }
    return -1;
}

/* A chunk's points between calls (one call a run of plain lines, thousands a chunk: a flush into the arrays at
 * each was most of the scanner's time), and its keys as C strings (the lists hold the str objects). */
enum { EV_EPOCH = 0, EV_EVALUATION = 1, EV_BEST_MODEL = 2, EV_CHECKPOINT = 3 };

typedef struct {
    Keys keys[2];  /* training keys, eval keys */
    Grow *grows[2];
    int timed;  /* a training value with a wall time (not NaN) was kept */
    PyObject *event;     /* core.model.Event */
    PyObject *kinds[4];  /* EventKind.EPOCH, EVALUATION, BEST_MODEL, CHECKPOINT */
    PyObject *detail;    /* ("detail",): Event's keyword */
    PyObject *names[3];  /* "epoch", "of", "path": the keys of the events' details */
    PyObject *texts[4];  /* the last event text of each kind, shared by the next one with the same characters */
} Sink;

static const Py_ssize_t PER[2] = {7, 3};  /* buffers a training key (step, value, line, wall; step, average,
                                             line), an eval key (step, value, line) */

static void sink_free(PyObject *capsule) {
    Sink *k = PyCapsule_GetPointer(capsule, "trainlint.coqui_sink");
    if (k == NULL) return;
    for (int w = 0; w < 2; w++) {
        for (Py_ssize_t i = 0; i < k->keys[w].n * PER[w]; i++) PyMem_Free(k->grows[w][i].data);
        PyMem_Free(k->grows[w]);
        PyMem_Free(k->keys[w].names);
        PyMem_Free(k->keys[w].lens);
    }
    Py_XDECREF(k->event);
    for (int i = 0; i < 4; i++) Py_XDECREF(k->kinds[i]);
    Py_XDECREF(k->detail);
    for (int i = 0; i < 3; i++) Py_XDECREF(k->names[i]);
    for (int i = 0; i < 4; i++) Py_XDECREF(k->texts[i]);
    PyMem_Free(k);
}

/* coqui_sink(Event, (EPOCH, EVALUATION, BEST_MODEL, CHECKPOINT)) -> a capsule holding a chunk's points until
 * coqui_flush, and what the scanner makes the events it reads with (the reader's _ev makes the same). */
static PyObject *coqui_sink(PyObject *self, PyObject *args) {
    PyObject *event, *kinds;
    if (!PyArg_ParseTuple(args, "OO!", &event, &PyTuple_Type, &kinds)) return NULL;
    if (PyTuple_GET_SIZE(kinds) != 4) return PyErr_Format(PyExc_ValueError, "four event kinds");
    Sink *k = PyMem_Calloc(1, sizeof(Sink));
    if (k == NULL) return PyErr_NoMemory();
    PyObject *cap = PyCapsule_New(k, "trainlint.coqui_sink", sink_free);
    if (cap == NULL) {
        PyMem_Free(k);
        return NULL;
    }
    k->event = Py_NewRef(event);
    for (int i = 0; i < 4; i++) k->kinds[i] = Py_NewRef(PyTuple_GET_ITEM(kinds, i));
    k->detail = Py_BuildValue("(s)", "detail");
    k->names[0] = PyUnicode_InternFromString("epoch");
    k->names[1] = PyUnicode_InternFromString("of");
    k->names[2] = PyUnicode_InternFromString("path");
    if (k->detail == NULL || k->names[0] == NULL || k->names[1] == NULL || k->names[2] == NULL) Py_CLEAR(cap);
    return cap;
}

/* The keys added to the list since the last call: their C strings and (empty) buffers. */
static int sink_keys(Sink *k, int w, PyObject *list) {
    Keys *ks = &k->keys[w];
    Py_ssize_t n = PyList_GET_SIZE(list), per = PER[w];
    if (n < ks->n) {
        PyErr_SetString(PyExc_ValueError, "a chunk's keys only grow");
        return -1;
    }
    if (n == ks->n) return 0;
    const char **names = PyMem_Realloc(ks->names, sizeof(char *) * (size_t)n);
    if (names != NULL) ks->names = names;
    Py_ssize_t *lens = PyMem_Realloc(ks->lens, sizeof(Py_ssize_t) * (size_t)n);
    if (lens != NULL) ks->lens = lens;
    Grow *g = PyMem_Realloc(k->grows[w], sizeof(Grow) * (size_t)(n * per));
    if (g != NULL) k->grows[w] = g;
    if (names == NULL || lens == NULL || g == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    memset(g + ks->n * per, 0, sizeof(Grow) * (size_t)((n - ks->n) * per));
    for (Py_ssize_t i = ks->n; i < n; i++) {
        PyObject *o = PyList_GET_ITEM(list, i);
        const char *name = PyUnicode_Check(o) ? PyUnicode_AsUTF8AndSize(o, &lens[i]) : NULL;
        if (name == NULL) {  /* a lone surrogate: never equal to an ASCII key */
            PyErr_Clear();
            name = "";
            lens[i] = -1;
        }
        names[i] = name;
    }
    ks->n = n;
    return 0;
}

/* The scanner's state across lines: what the Python reader's _State would hold. */
typedef struct {
    int mode, has_step, has_eval;
    int has_cr;           /* the text holds a carriage return (0: no line needs looking for one) */
    PyObject *ops;        /* the state the reader takes over: the last step header, epoch, evaluation read */
    Py_ssize_t at[3];     /* the index in ops of each (-1: none yet), in the order each first came */
    PyObject *events;     /* the log's events: the scanner appends the epochs, evaluations, saved models */
    Sink *sink;
    double step, wall, eval_step;
    long long local, total;
    Keys *train, *eval;
    Grow *tg, *eg;
    int *timed;
} Scan;

/* The op of kind ``which`` (0 step header, 1 epoch, 2 evaluation; stolen): it replaces the last one of its kind,
 * which keeps its place (the reader sets the log's facts in the order they first came, as its regex path does). */
static int put_op(Scan *c, int which, PyObject *op) {
    if (op == NULL) return -1;
    if (c->at[which] >= 0) return PyList_SetItem(c->ops, c->at[which], op) < 0 ? -1 : 1;
    c->at[which] = PyList_GET_SIZE(c->ops);
    int r = PyList_Append(c->ops, op);
    Py_DECREF(op);
    return r < 0 ? -1 : 1;
}

/* The event's text as a str: the last one of its kind when the characters are the same (every evaluation of a
 * Coqui log is "EVALUATION": 465k events of a 1 GB log, 59 bytes each, were a str each). NULL with an error set. */
static PyObject *event_text(Sink *k, int kind, const unsigned char *text, Py_ssize_t len) {
    PyObject *last = k->texts[kind];
    if (last != NULL && PyUnicode_IS_COMPACT_ASCII(last) && PyUnicode_GET_LENGTH(last) == len &&
        memcmp(PyUnicode_DATA(last), text, (size_t)len) == 0)
        return Py_NewRef(last);
    PyObject *t = PyUnicode_FromStringAndSize((const char *)text, len);
    if (t != NULL) Py_XSETREF(k->texts[kind], Py_NewRef(t));
    return t;
}

/* Event(kind, step, line, text, detail=detail) appended to the log's events, as the reader's _ev makes it (step
 * and detail stolen; step NULL: None). 1, or -1 with an error set. */
static int add_event(Scan *c, int kind, PyObject *step, unsigned int line, const unsigned char *text, Py_ssize_t len,
                     PyObject *detail) {
    PyObject *args[5] = {NULL, c->sink->kinds[kind], step ? step : Py_NewRef(Py_None), PyLong_FromUnsignedLong(line),
                         event_text(c->sink, kind, text, len)};
    PyObject *all[6] = {args[0], args[1], args[2], args[3], args[4], detail};
    PyObject *ev = NULL;
    if (args[2] != NULL && args[3] != NULL && args[4] != NULL && detail != NULL)
        ev = PyObject_Vectorcall(c->sink->event, all + 1, 4 | PY_VECTORCALL_ARGUMENTS_OFFSET, c->sink->detail);
    Py_XDECREF(args[2]);
    Py_XDECREF(args[3]);
    Py_XDECREF(args[4]);
    Py_XDECREF(detail);
    int r = ev == NULL ? -1 : PyList_Append(c->events, ev);
    Py_XDECREF(ev);
    return r < 0 ? -1 : 1;
}

/* A detail dict of one or two entries (the values stolen). */
static PyObject *detail_of(PyObject *k1, PyObject *v1, PyObject *k2, PyObject *v2) {
    PyObject *d = v1 == NULL || (k2 != NULL && v2 == NULL) ? NULL : PyDict_New();
    if (d != NULL && (PyDict_SetItem(d, k1, v1) < 0 || (k2 != NULL && PyDict_SetItem(d, k2, v2) < 0))) Py_CLEAR(d);
    Py_XDECREF(v1);
    Py_XDECREF(v2);
    return d;
}

/* ``> BEST MODEL : path`` or ``> CHECKPOINT : path`` at s[k]: the op (3, best, step, line, text, path) as
 * _saved gets it (the path stripped; the step of its first ``_<digits>.pth``, else the current step or None;
 * the text the match stripped). 1 read, 0 the regex reads it (a byte outside ASCII in the path: Unicode's
 * \\d and whitespace), -1 an error. */
static int saved(Scan *c, const unsigned char *s, Py_ssize_t k, Py_ssize_t e, unsigned int line) {
    Py_ssize_t p0 = k + 15, q = p0;
    while (q < e && s[q] != '\r' && s[q] != 0x1b) q++;  /* [^\n\r\x1b]* */
    for (Py_ssize_t x = p0; x < q; x++)
        if (s[x] >= 0x80) return 0;
    if (!no_match_in(s, q, e, -1)) return 0;
    Py_ssize_t a = p0, b = q, t = q;
    while (a < b && is_py_space(s[a])) a++;
    while (b > a && is_py_space(s[b - 1])) b--;
    while (t > k && is_py_space(s[t - 1])) t--;
    double at = c->step;
    int known = c->has_step;
    for (Py_ssize_t x = a; x < b; x++) {  /* _STEP_IN_NAME.search: the leftmost _(\d+)\.pth */
        if (s[x] != '_') continue;
        Py_ssize_t y = x + 1;
        while (y < b && s[y] >= '0' && s[y] <= '9') y++;
        if (y > x + 1 && b - y >= 4 && memcmp(s + y, ".pth", 4) == 0) {
            if (!strict_number((const char *)s + x + 1, y - x - 1, &at)) return 0;
            known = 1;
            break;
        }
    }
    if (c->mode != MODE_TRAIN) c->mode = MODE_NONE;
    PyObject *step = known ? PyFloat_FromDouble(at) : NULL;
    if (known && step == NULL) return -1;
    PyObject *path = PyUnicode_FromStringAndSize((const char *)s + a, b - a);
    PyObject *detail = detail_of(c->sink->names[2], path, NULL, NULL);
    return add_event(c, s[k + 2] == 'B' ? EV_BEST_MODEL : EV_CHECKPOINT, step, line, s + k, t - k, detail);
}

/* strict_number, Clinger's path tried first: the text it reads whole is digits, a sign, a point and an exponent,
 * each a character strict_number's check lets through, so its check (a second pass over the text) is skipped. */
static int number(const char *p, Py_ssize_t n, double *out) {
    return (n > 0 && n <= 400 && clinger(p, p + n, out)) || strict_number(p, n, out);
}

/* A value line ``| > key: value (average)`` from s[k] (``| > ``) to its end e: 1 read, 0 the Python path reads it,
 * -1 an error. */
static int value_row(Scan *c, const unsigned char *s, Py_ssize_t k, Py_ssize_t e, unsigned int line) {
    Value v;
    if (!value_line(s, e, k + 4, &v)) return 0;
    const char *p = (const char *)s;
    double value, avg;
    if (c->mode == MODE_TRAIN && c->has_step) {
        Py_ssize_t at = find_key(c->train, s + v.key, v.key_len);
        if (at < 0 || !number(p + v.num, v.num_len, &value)) return 0;
        if (v.paren_len >= 0 && !number(p + v.paren, v.paren_len, &avg)) return 0;
        Grow *g = c->tg + 7 * at;
        if (c->wall == c->wall) *c->timed = 1;
        if (put(g, &c->step, 8) < 0 || put(g + 1, &value, 8) < 0 || put(g + 2, &line, 4) < 0 ||
            put(g + 3, &c->wall, 8) < 0)
            return -1;
        if (v.paren_len >= 0 && (put(g + 4, &c->step, 8) < 0 || put(g + 5, &avg, 8) < 0 || put(g + 6, &line, 4) < 0))
            return -1;
    } else if (c->mode == MODE_EVAL && c->has_eval) {
        Py_ssize_t at = find_key(c->eval, s + v.key, v.key_len);
        if (at < 0 || !number(p + v.num, v.num_len, &value)) return 0;
        Grow *g = c->eg + 3 * at;
        if (put(g, &c->eval_step, 8) < 0 || put(g + 1, &value, 8) < 0 || put(g + 2, &line, 4) < 0)
            return -1;
    }
    return 1;  /* in any other mode the reader matches the line and reads nothing from it */
}

/* One line s[i:e] (no break in it): 1 read, 0 the Python path reads it, -1 an error. */
static int coqui_line(Scan *c, const unsigned char *s, Py_ssize_t i, Py_ssize_t e, Py_ssize_t n,
                      unsigned int line) {
    const unsigned char *cr = c->has_cr ? memchr(s + i, '\r', (size_t)(e - i)) : NULL;
    if (cr != NULL && !(cr == s + e - 1 && e < n)) return 0;  /* a lone \r is a line break to count_breaks */
    Py_ssize_t k = i;
    while (k < e && (s[k] == ' ' || s[k] == '\t' || s[k] == 0x1b))
        if (s[k] == 0x1b ? !skip_escapes(s, e, &k) : (k++, 0)) return 0;
    /* six lines in eight: no match can start in the prefix (blanks, colour codes), and one can at k */
    if (e - k >= 4 && s[k] == '|' && s[k + 1] == ' ' && s[k + 2] == '>' && s[k + 3] == ' ')
        return value_row(c, s, k, e, line);
    if (no_match_in(s, i, e, i)) return 1;  /* blank, colour codes, a path, text: no match, nothing read */
    if (e - k >= 12 && memcmp(s + k, "> TRAINING (", 12) == 0) {
        if (!no_match_in(s, k + 12, e, -1)) return 0;
        c->mode = MODE_NONE;
        return 1;
    }
    if (e - k >= 20 && memcmp(s + k, "--> EVAL PERFORMANCE", 20) == 0) {
        if (!no_match_in(s, k + 20, e, -1)) return 0;
        if (c->mode == MODE_EVAL_PENDING) c->mode = MODE_EVAL;
        return 1;
    }
    if (e - k >= 4 && memcmp(s + k, "--> ", 4) == 0) {
        long long local, total, g;
        double wall;
        if (!step_header(s, e, k + 4, &local, &total, &g, &wall)) return 0;
        c->mode = MODE_TRAIN;
        c->has_step = 1;
        c->step = (double)g;
        c->wall = wall;
        c->local = local;
        c->total = total;
        return put_op(c, 0, Py_BuildValue("(iLLdd)", 0, local, total, c->step, wall));
    }
    if (e - k >= 9 && memcmp(s + k, "> EPOCH: ", 9) == 0) {
        Py_ssize_t q = k + 9;
        long long ep = digits15(s, e, &q), of = -1;
        if (ep < 0 || q >= e || s[q++] != '/' || (of = digits15(s, e, &q)) < 0 || !no_match_in(s, q, e, -1)) return 0;
        c->mode = MODE_NONE;
        /* _epoch: the epoch starts where the last step header's epoch ends */
        double start = c->has_step ? c->step + (double)(c->total > c->local ? c->total - c->local : 0) : 0.0;
        PyObject *detail = detail_of(c->sink->names[0], PyLong_FromLongLong(ep), c->sink->names[1],
                                     PyLong_FromLongLong(of));
        PyObject *at = PyFloat_FromDouble(start);
        if (at == NULL) {
            Py_XDECREF(detail);
            return -1;
        }
        if (add_event(c, EV_EPOCH, at, line, s + k, q - k, detail) < 0) return -1;
        return put_op(c, 1, Py_BuildValue("(iLL)", 1, ep, of));
    }
    if (e - k >= 15 && (memcmp(s + k, "> BEST MODEL : ", 15) == 0 || memcmp(s + k, "> CHECKPOINT : ", 15) == 0))
        return saved(c, s, k, e, line);
    if (e - k >= 12 && memcmp(s + k, "> EVALUATION", 12) == 0) {
        if (k + 12 < e && (s[k + 12] >= 0x80 || is_word(s[k + 12]))) return 0;  /* \b: \w is Unicode's */
        if (!no_match_in(s, k + 12, e, -1)) return 0;
        c->mode = MODE_EVAL_PENDING;
        c->has_eval = 1;
        c->eval_step = c->has_step ? c->step + (double)(c->total > c->local ? c->total - c->local : 0) : 0.0;
        PyObject *at = PyFloat_FromDouble(c->eval_step);
        if (at == NULL) return -1;
        if (add_event(c, EV_EVALUATION, at, line, (const unsigned char *)"EVALUATION", 10, PyDict_New()) < 0)
            return -1;
        return put_op(c, 2, Py_BuildValue("(id)", 2, c->eval_step));
    }
    return 0;
}

/* Past the rest of a line the previous match ended in, when nothing on it could start another: its end. */
static Py_ssize_t rest_of_line(const unsigned char *s, Py_ssize_t i, Py_ssize_t n) {
    for (; i < n && s[i] != '\n'; i++)
        if (could_start(s, i, n, -1) || (s[i] == '\r' && !(i + 1 < n && s[i + 1] == '\n'))) return -1;
    return i;
}

/* coqui_lines(text, pos, line, mode, has_step, step, wall, has_eval, eval_step, local, total, train_keys,
 *             eval_keys, sink, events, has_cr=True) -> (pos, line, mode, ops)
 *
 * CoquiReader's loop from text[pos] (line number ``line``; the rest: its _State) over the lines it can read:
 * value lines of known keys (their points kept in the sink: coqui_flush), step headers, epochs, evaluation
 * headers, the lines that only change the mode and those no match can start in. Stops at the start of the first
 * line the regex must read (or at pos, when the rest of the line pos is in could hold a match), or at the end.
 * The epochs, evaluations and saved models it reads are appended to ``events`` as the reader's _epoch,
 * _evaluation and _saved make them (a Python call each was most of the reader's time left). ops: the state the
 * reader takes over, at most one of each, in the order each kind first came (the log's facts are set in that
 * order): (0, local, total, global step, wall) the last step header, (1, epoch, of) the last epoch, (2, eval
 * step) the last evaluation. A text that is not one byte a character is left to the Python path whole. has_cr
 * False: the caller knows the text holds no carriage return (a memchr a line saved). */
static PyObject *coqui_lines(PyObject *self, PyObject *args) {
    PyObject *text, *tkeys, *ekeys, *capsule;
    Py_ssize_t pos;
    long long line;
    Scan c;
    memset(&c, 0, sizeof c);
    c.has_cr = 1;
    if (!PyArg_ParseTuple(args, "UnLipddpdLLO!O!OO!|p", &text, &pos, &line, &c.mode, &c.has_step, &c.step, &c.wall,
                          &c.has_eval, &c.eval_step, &c.local, &c.total, &PyList_Type, &tkeys, &PyList_Type, &ekeys,
                          &capsule, &PyList_Type, &c.events, &c.has_cr))
        return NULL;
    c.at[0] = c.at[1] = c.at[2] = -1;
    Sink *k = PyCapsule_GetPointer(capsule, "trainlint.coqui_sink");
    if (k == NULL || sink_keys(k, 0, tkeys) < 0 || sink_keys(k, 1, ekeys) < 0) return NULL;
    c.sink = k;
    c.train = &k->keys[0];
    c.eval = &k->keys[1];
    c.tg = k->grows[0];
    c.eg = k->grows[1];
    c.timed = &k->timed;
    if ((c.ops = PyList_New(0)) == NULL) return NULL;
    Py_ssize_t n = PyUnicode_GET_LENGTH(text), i = pos;
    int go = PyUnicode_KIND(text) == PyUnicode_1BYTE_KIND && pos >= 0 && pos <= n;
    const unsigned char *s = PyUnicode_1BYTE_DATA(text);
    if (go && i > 0 && s[i - 1] != '\n') {  /* the rest of the line a match ended in */
        Py_ssize_t r = rest_of_line(s, i, n);
        go = r >= 0;
        if (r >= 0 && r < n) {
            i = r + 1;
            line++;
        } else if (r == n) {
            i = n;
        }
    }
    while (go && i < n) {
        const unsigned char *nl = memchr(s + i, '\n', (size_t)(n - i));
        Py_ssize_t e = nl ? nl - s : n;
        if (line < 0 || line > UINT_MAX) break;  /* array('I') refuses it: the Python path raises */
        int r = coqui_line(&c, s, i, e, n, (unsigned int)line);
        if (r < 0) {
            Py_DECREF(c.ops);
            return PyErr_Occurred() ? NULL : PyErr_NoMemory();
        }
        if (r == 0) break;
        i = nl ? e + 1 : n;
        line += nl != NULL;
    }
    return Py_BuildValue("nLiN", i, line, c.mode, c.ops);
}

/* coqui_flush(sink, train_bufs, eval_bufs): the sink's points appended to the arrays of their keys (train_bufs[k]:
 * 7 arrays d, d, I, d, d, d, I; eval_bufs[k]: 3 arrays d, d, I), one frombytes a column. True when a training
 * value with a wall time was kept since the sink was made (else the walls need not be looked through). */
static PyObject *coqui_flush(PyObject *self, PyObject *args) {
    PyObject *capsule, *bufs[2];
    if (!PyArg_ParseTuple(args, "OO!O!", &capsule, &PyList_Type, &bufs[0], &PyList_Type, &bufs[1])) return NULL;
    Sink *k = PyCapsule_GetPointer(capsule, "trainlint.coqui_sink");
    if (k == NULL) return NULL;
    for (int w = 0; w < 2; w++) {
        if (PyList_GET_SIZE(bufs[w]) < k->keys[w].n) {  /* keys the Python path added since: none in C yet */
            PyErr_SetString(PyExc_ValueError, "one buffer tuple a key");
            return NULL;
        }
        for (Py_ssize_t j = 0; j < k->keys[w].n; j++) {
            PyObject *t = PyList_GET_ITEM(bufs[w], j);
            if (!PyTuple_Check(t) || PyTuple_GET_SIZE(t) != PER[w]) {
                PyErr_SetString(PyExc_ValueError, "a key's buffers are a tuple of arrays");
                return NULL;
            }
            for (Py_ssize_t f = 0; f < PER[w]; f++)
                if (grow_flush(k->grows[w] + j * PER[w] + f, PyTuple_GET_ITEM(t, f)) < 0) return NULL;
        }
    }
    return PyBool_FromLong(k->timed);
}

static PyMethodDef METHODS[] = {
    {"coqui_lines", coqui_lines, METH_VARARGS, "CoquiReader's loop over value lines and step headers."},
    {"coqui_sink", coqui_sink, METH_VARARGS, "A chunk's points, kept in C between coqui_lines calls."},
    {"coqui_flush", coqui_flush, METH_VARARGS, "The sink's points appended to their arrays."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_ctext", "trainlint's compiled text scanner.", -1,
                                    METHODS};

PyMODINIT_FUNC PyInit__ctext(void) {
    init_numchar();
    init_classes();
    return PyModule_Create(&MODULE);
}
