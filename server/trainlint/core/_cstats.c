/* The judge's per-point loops over a long series, compiled: rules/stats.py's cache update, its sliding window
 * median, rules/noise.py's least-squares sums and log-change MAD, and rules/timing.py's walk of wall-clock intervals.
 *
 * A cold `trainlint check` of a 100 MB CSV (3.6 M points) spent 1.85 s in `stats()`'s Python loop alone, more
 * than reading the file (1.2 s), and another second sliding the lowest-median window and summing the fitted line.
 * These are exact ports: the same IEEE double operations in the same order (no -ffast-math, no FMA contraction:
 * setup.py builds this module with -ffp-contract=off), so every number a rule measures is the same bit for bit.
 * Each function does only the common case and says where it stopped; the Python loop reads on from there (a
 * non-finite value, a step that goes back), so both paths give the same cache by construction
 * (tests/test_compiled_stats.py holds them to it on real and random series).
 *
 * Built by setup.py as an optional extension; rules/stats.py and noise.py use their own loops without it
 * (TRAINLINT_PURE=1 forces that).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <math.h>
#include <string.h>

#include "_cgrow.h"

/* A read-only view of an array('d') (or any contiguous buffer of doubles). */
static int doubles(PyObject *obj, Py_buffer *view, const double **out, Py_ssize_t *n) {
    if (PyObject_GetBuffer(obj, view, PyBUF_SIMPLE) < 0) return -1;
    if (view->len % (Py_ssize_t)sizeof(double)) {
        PyBuffer_Release(view);
        PyErr_SetString(PyExc_ValueError, "not a buffer of doubles");
        return -1;
    }
    *out = (const double *)view->buf;
    *n = view->len / (Py_ssize_t)sizeof(double);
    return 0;
}

static int append_pair(PyObject *list, Py_ssize_t j, Py_ssize_t i) {
    PyObject *t = Py_BuildValue("(nn)", j, i);
    if (t == NULL) return -1;
    int r = PyList_Append(list, t);
    Py_DECREF(t);
    return r;
}

/* The scalars of a Stats the loop updates, in the order stats.py packs them. */
typedef struct {
    Py_ssize_t count, top, fin_improved, fin_best, zeros, wall_first, wall_last, wall_count, negative;
    double mean, m2, fin_max, fin_min, fin_min_positive;
    int fin_rising;
} Scalars;

/* stats_run(values, steps, walls, start, nonpos, dups, scalars) -> (next, scalars)
 *
 * rules/stats.py's stats() loop from `start` while every point so far is finite and the steps have never gone
 * back (the case where the finite points are the series itself and an equal step can only be the one just
 * before). It stops before the first point that is not finite, whose step is below the one before it or below the
 * largest so far: stats() reads on from there in Python. `walls` is the wall-clock array when it has a time for
 * every point, else None. scalars: (count, mean, m2, top, fin_rising, fin_improved, fin_max, fin_min, fin_best,
 * fin_min_positive, zeros, wall_first, wall_last, wall_count, negative). */
static PyObject *stats_run(PyObject *self, PyObject *args) {
    PyObject *vobj, *sobj, *wobj, *nonpos, *dups;
    Py_ssize_t start;
    Scalars c;
    if (!PyArg_ParseTuple(args, "OOOnOO!(nddnpnddndnnnnn)", &vobj, &sobj, &wobj, &start, &nonpos,
                          &PyList_Type, &dups, &c.count, &c.mean, &c.m2, &c.top, &c.fin_rising, &c.fin_improved,
                          &c.fin_max, &c.fin_min, &c.fin_best, &c.fin_min_positive, &c.zeros, &c.wall_first,
                          &c.wall_last, &c.wall_count, &c.negative))
        return NULL;
    if (!array_of(nonpos, "q", 8)) {
        PyErr_SetString(PyExc_TypeError, "stats_run: nonpos is not an array('q')");
        return NULL;
    }
    Py_buffer vb, sb, wb;
    const double *values, *steps, *walls = NULL;
    Py_ssize_t n, ns, nw = 0;
    if (doubles(vobj, &vb, &values, &n) < 0) return NULL;
    if (doubles(sobj, &sb, &steps, &ns) < 0) {
        PyBuffer_Release(&vb);
        return NULL;
    }
    int has_walls = wobj != Py_None;
    if (has_walls && doubles(wobj, &wb, &walls, &nw) < 0) {
        PyBuffer_Release(&vb);
        PyBuffer_Release(&sb);
        return NULL;
    }
    if (ns < n || (has_walls && nw < n)) n = 0;  /* never read past a shorter array: Python decides */
    Py_ssize_t i = start < 0 ? 0 : start;
    int failed = 0;
    Grow pos = {NULL, 0, 0};  /* the indices of values <= 0, appended to nonpos in one call at the end */
    for (; i < n; i++) {
        double v = values[i], x = steps[i];
        if (!isfinite(v)) break;
        if (c.top >= 0 && x < steps[c.top]) break;      /* a seam: stats() remembers every step from here */
        if (c.count && i > 0 && x < steps[i - 1]) break; /* the last run's start moves: stats() sets it */
        if (c.count) {
            double prev = values[i - 1];
            if (v <= prev) c.fin_rising = 0;
            if (v < prev) c.fin_improved++;
        }
        if (v > c.fin_max) c.fin_max = v;
        if (v < c.fin_min) {
            c.fin_min = v;
            c.fin_best = c.count;
        }
        if (0 < v && v < c.fin_min_positive) c.fin_min_positive = v;
        c.count++;
        double d = v - c.mean;
        c.mean += d / (double)c.count;
        c.m2 += d * (v - c.mean);
        if (v == 0) c.zeros++;
        if (has_walls && isfinite(walls[i])) {
            if (c.wall_first < 0) c.wall_first = i;
            c.wall_last = i;
            c.wall_count++;
        }
        if (v <= 0) {
            long long at = (long long)i;
            if (grow_put(&pos, &at, sizeof at) < 0) {
                PyErr_NoMemory();
                failed = 1;
                break;
            }
            if (v < 0) c.negative++;
        }
        if (c.top < 0 || x > steps[c.top]) c.top = i;
        if (i > 0 && steps[i - 1] == x && v != values[i - 1] && append_pair(dups, i - 1, i) < 0) {
            failed = 1;
            break;
        }
    }
    PyBuffer_Release(&vb);
    PyBuffer_Release(&sb);
    if (has_walls) PyBuffer_Release(&wb);
    if (!failed && grow_flush(&pos, nonpos) < 0) failed = 1;
    PyMem_Free(pos.data);
    if (failed) return NULL;
    return Py_BuildValue("n(nddnOnddndnnnnn)", i, c.count, c.mean, c.m2, c.top, c.fin_rising ? Py_True : Py_False,
                         c.fin_improved, c.fin_max, c.fin_min, c.fin_best, c.fin_min_positive, c.zeros, c.wall_first,
                         c.wall_last, c.wall_count, c.negative);
}

/* bisect.bisect_right / bisect_left over items[0:k] */
static Py_ssize_t right_of(const double *items, Py_ssize_t k, double x) {
    Py_ssize_t lo = 0, hi = k;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) >> 1;
        if (x < items[mid]) hi = mid;
        else lo = mid + 1;
    }
    return lo;
}

static Py_ssize_t left_of(const double *items, Py_ssize_t k, double x) {
    Py_ssize_t lo = 0, hi = k;
    while (lo < hi) {
        Py_ssize_t mid = (lo + hi) >> 1;
        if (items[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* extreme_slide(vals, items, start, w, next_b, best, a0, b0, highest) -> (items, best, a0, b0)
 *
 * rules/stats.py's _extreme_level loop: for each window end b from next_b to len(vals), the window
 * [max(start, b - w), b) kept sorted (insort, then the first equal value deleted, as insort and bisect_left do),
 * its median as stats.median computes it, and the lowest (highest) one with its window. `items` is the sorted
 * window ending at next_b - 1 (bytes of doubles); the returned items are the window ending at len(vals). */
static PyObject *extreme_slide(PyObject *self, PyObject *args) {
    PyObject *vobj;
    Py_buffer ib;
    Py_ssize_t start, w, next_b, a0, b0;
    double best;
    int highest;
    if (!PyArg_ParseTuple(args, "Oy*nnndnnp", &vobj, &ib, &start, &w, &next_b, &best, &a0, &b0, &highest))
        return NULL;
    Py_buffer vb;
    const double *vals;
    Py_ssize_t n;
    if (doubles(vobj, &vb, &vals, &n) < 0) {
        PyBuffer_Release(&ib);
        return NULL;
    }
    Py_ssize_t k = ib.len / (Py_ssize_t)sizeof(double), cap = k + (w > 0 ? w : 0) + (n - next_b + 2);
    if (cap < 1) cap = 1;
    double *items = PyMem_Malloc((size_t)cap * sizeof(double));
    if (items == NULL) {
        PyBuffer_Release(&ib);
        PyBuffer_Release(&vb);
        return PyErr_NoMemory();
    }
    memcpy(items, ib.buf, (size_t)k * sizeof(double));
    PyBuffer_Release(&ib);
    for (Py_ssize_t b = next_b; b <= n; b++) {
        double x = vals[b - 1];
        Py_ssize_t at = right_of(items, k, x);
        memmove(items + at + 1, items + at, (size_t)(k - at) * sizeof(double));
        items[at] = x;
        k++;
        Py_ssize_t a = b - w;
        if (a > start) {
            Py_ssize_t del = left_of(items, k, vals[a - 1]);
            if (del < k) {  /* list.__delitem__ at k would raise: the window holds the value by construction */
                memmove(items + del, items + del + 1, (size_t)(k - del - 1) * sizeof(double));
                k--;
            }
        } else {
            a = start;
        }
        Py_ssize_t mid = k >> 1;
        double level = (k & 1) ? items[mid] : (items[mid - 1] + items[mid]) / 2;
        if (highest ? level > best : level < best) {
            best = level;
            a0 = a;
            b0 = b;
        }
    }
    PyBuffer_Release(&vb);
    PyObject *out = PyBytes_FromStringAndSize((const char *)items, k * (Py_ssize_t)sizeof(double));
    PyMem_Free(items);
    if (out == NULL) return NULL;
    return Py_BuildValue("Ndnn", out, best, a0, b0);
}

/* fit_sums(vals, seg, nxt, (n, sx, sy, sxx, sxy, ymax, xmax)) -> the same tuple, over vals[nxt:]
 *
 * rules/noise.py's fitted_change loop: the running sums of x = j - seg and y = log(v) over the points above 0,
 * and the first highest y with its x. log is the C library's, as math.log calls it for a finite positive x. */
static PyObject *fit_sums(PyObject *self, PyObject *args) {
    PyObject *vobj;
    Py_ssize_t seg, nxt, cnt;
    double sx, sy, sxx, sxy, ymax, xmax;
    if (!PyArg_ParseTuple(args, "Onn(ndddddd)", &vobj, &seg, &nxt, &cnt, &sx, &sy, &sxx, &sxy, &ymax, &xmax))
        return NULL;
    Py_buffer vb;
    const double *vals;
    Py_ssize_t n;
    if (doubles(vobj, &vb, &vals, &n) < 0) return NULL;
    for (Py_ssize_t j = nxt < 0 ? 0 : nxt; j < n; j++) {
        double v = vals[j];
        if (v > 0) {
            double x = (double)(j - seg), y = log(v);
            cnt++;
            sx = sx + x;
            sy = sy + y;
            sxx = sxx + x * x;
            sxy = sxy + x * y;
            if (y > ymax) {
                ymax = y;
                xmax = x;
            }
        }
    }
    PyBuffer_Release(&vb);
    return Py_BuildValue("(ndddddd)", cnt, sx, sy, sxx, sxy, ymax, xmax);
}

/* wall_walk(steps, walls, pos, end, prev, evals, idx, start, per_step) -> prev
 *
 * rules/timing.py's _WallIntervals.update walk over points [pos, end): for each point with a finite wall-clock
 * time after a timed point of a lower step and no later wall, the interval is kept (idx, an array("q"), start and
 * per_step, arrays("d"), appended) unless a held-out step lies within it (evals: the sorted held-out steps, as
 * doubles). prev is the last timed point's (step, wall), or None; the one after the walk is returned. Arrays, not
 * lists: the intervals stay in the series' cache, and as lists of int and float objects (about 100 bytes an
 * interval) they raised the server's RSS for 2,000 stopped runs from 114 to 158 MB. */
static PyObject *wall_walk(PyObject *self, PyObject *args) {
    PyObject *sobj, *wobj, *prev_obj, *eobj, *idx, *start, *per_step;
    Py_ssize_t pos, end;
    if (!PyArg_ParseTuple(args, "OOnnOOOOO", &sobj, &wobj, &pos, &end, &prev_obj, &eobj, &idx, &start, &per_step))
        return NULL;
    if (!array_of(idx, "q", 8) || !array_of(start, "d", 8) || !array_of(per_step, "d", 8)) {
        PyErr_SetString(PyExc_TypeError, "idx must be an array('q'), start and per_step arrays('d')");
        return NULL;
    }
    int has_prev = prev_obj != Py_None;
    double pstep = 0, pwall = 0;
    if (has_prev && !PyArg_ParseTuple(prev_obj, "dd", &pstep, &pwall)) return NULL;
    Py_buffer sb, wb, eb;
    const double *steps, *walls, *evals;
    Py_ssize_t ns, nw, ne;
    if (doubles(sobj, &sb, &steps, &ns) < 0) return NULL;
    if (doubles(wobj, &wb, &walls, &nw) < 0) {
        PyBuffer_Release(&sb);
        return NULL;
    }
    if (doubles(eobj, &eb, &evals, &ne) < 0) {
        PyBuffer_Release(&sb);
        PyBuffer_Release(&wb);
        return NULL;
    }
    if (end > ns) end = ns;
    if (end > nw) end = nw;
    Grow gi = {0}, gs = {0}, gp = {0};
    int failed = 0;
    for (Py_ssize_t i = pos < 0 ? 0 : pos; i < end && !failed; i++) {
        double step = steps[i], wall = walls[i];
        if (!isfinite(wall)) continue;
        if (has_prev && step > pstep && wall >= pwall) {
            Py_ssize_t k = left_of(evals, ne, pstep);
            if (k == ne || evals[k] > step) {
                long long at = (long long)i;
                double per = (wall - pwall) / (step - pstep);
                failed = grow_put(&gi, &at, sizeof at) < 0 || grow_put(&gs, &pstep, sizeof pstep) < 0 ||
                         grow_put(&gp, &per, sizeof per) < 0;
            }
        }
        has_prev = 1;
        pstep = step;
        pwall = wall;
    }
    PyBuffer_Release(&sb);
    PyBuffer_Release(&wb);
    PyBuffer_Release(&eb);
    if (failed) PyErr_NoMemory();
    else failed = grow_flush(&gi, idx) < 0 || grow_flush(&gs, start) < 0 || grow_flush(&gp, per_step) < 0;
    PyMem_Free(gi.data);
    PyMem_Free(gs.data);
    PyMem_Free(gp.data);
    if (failed) return NULL;
    if (!has_prev) Py_RETURN_NONE;
    return Py_BuildValue("(dd)", pstep, pwall);
}

/* noise_mad(vals, lo, b) -> (changes, mad) or None
 *
 * rules/noise.py's log_noise over vals[lo:b]: the point-to-point changes of log(v) over the points above 0, their
 * median, and the median of their absolute deviations from it (the MAD; NaN when there are fewer than 4 changes).
 * None when a log value is not finite (an infinite value: inf - inf is NaN, and sorted() leaves a NaN where its
 * comparisons happen to): the Python function measures those. Six calls of a judge each sorted 255 changes twice
 * in Python, 75 us a call: the largest part of a CSV's re-judge after one row, and the part of it that grew with
 * the log (a shorter log's series do not fill the window). Sorting doubles gives the same values in the same places
 * as sorted(): no change is NaN or -0.0 (log never returns -0.0, and y - y is +0.0), so equal values are equal
 * bit for bit. */
static int cmp_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double middle(const double *d, Py_ssize_t k) {
    return k % 2 ? d[k / 2] : (d[k / 2 - 1] + d[k / 2]) / 2;
}

static PyObject *noise_mad(PyObject *self, PyObject *args) {
    PyObject *vobj;
    Py_ssize_t lo, b;
    if (!PyArg_ParseTuple(args, "Onn", &vobj, &lo, &b)) return NULL;
    Py_buffer vb;
    const double *vals;
    Py_ssize_t n;
    if (doubles(vobj, &vb, &vals, &n) < 0) return NULL;
    if (lo < 0 || b > n || lo > b) {  /* a slice Python would clip: left to it */
        PyBuffer_Release(&vb);
        Py_RETURN_NONE;
    }
    double *d = PyMem_Malloc((size_t)(b - lo + 1) * sizeof(double));
    if (d == NULL) {
        PyBuffer_Release(&vb);
        return PyErr_NoMemory();
    }
    Py_ssize_t k = 0, m = 0;
    double prev = 0.0;
    int finite = 1;
    for (Py_ssize_t j = lo; j < b; j++) {
        double v = vals[j];
        if (v > 0) {
            double y = log(v);
            if (!isfinite(y)) {
                finite = 0;
                break;
            }
            if (m++) d[k++] = y - prev;
            prev = y;
        }
    }
    PyBuffer_Release(&vb);
    if (!finite) {
        PyMem_Free(d);
        Py_RETURN_NONE;
    }
    double mad = NAN;
    if (k >= 4) {
        qsort(d, (size_t)k, sizeof(double), cmp_doubles);
        double med = middle(d, k);
        for (Py_ssize_t i = 0; i < k; i++) d[i] = fabs(d[i] - med);
        qsort(d, (size_t)k, sizeof(double), cmp_doubles);
        mad = middle(d, k);
    }
    PyMem_Free(d);
    return Py_BuildValue("(nd)", k, mad);
}

static PyMethodDef METHODS[] = {
    {"noise_mad", noise_mad, METH_VARARGS, "rules/noise.py's median absolute deviation of log changes."},
    {"wall_walk", wall_walk, METH_VARARGS, "rules/timing.py's walk of wall-clock intervals."},
    {"stats_run", stats_run, METH_VARARGS, "rules/stats.py's cache update over finite points with rising steps."},
    {"extreme_slide", extreme_slide, METH_VARARGS, "rules/stats.py's sliding lowest / highest window median."},
    {"fit_sums", fit_sums, METH_VARARGS, "rules/noise.py's least-squares sums of log values."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef MODULE = {PyModuleDef_HEAD_INIT, "_cstats", "trainlint's compiled series measurements.",
                                    -1, METHODS};

PyMODINIT_FUNC PyInit__cstats(void) { return PyModule_Create(&MODULE); }
