/* Clinger's fast path for the compiled scanners (_cscan.c, _cjsonl.c, _ctext.c include it): one copy of the
 * number code that must give float()'s double bit for bit (each module's tests hold it against float()). */
#ifndef TRAINLINT_CFLOAT_H
#define TRAINLINT_CFLOAT_H

#include <Python.h>
#include <float.h>
#include <stdint.h>
#include <string.h>

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

#ifdef CFLOAT_STRICT  /* the modules that read numbers from raw text: _cscan.c (CSV cells), _ctext.c */

/* The characters of a number float() reads without stripping or translating anything: digits, sign, point,
 * exponent, and the letters of nan / inf / infinity. Other bytes (spaces, underscores, non-ASCII digits) send the
 * text to the Python path. Each module calls init_numchar() when it loads. */
static unsigned char NUMCHAR[256];

static void init_numchar(void) {
    const char *ok = "0123456789+-.eEnNaAiIfFtTyY";
    for (const char *p = ok; *p; p++) NUMCHAR[(unsigned char)*p] = 1;
}

/* 1 and *out set: float() reads the n bytes at p (a CSV cell, a logged value: not NUL-terminated) as *out; 0: the
 * Python path decides (no error set). */
static int strict_number(const char *p, Py_ssize_t n, double *out) {
    if (n <= 0 || n > 400) return 0;
    for (Py_ssize_t i = 0; i < n; i++)
        if (!NUMCHAR[(unsigned char)p[i]]) return 0;
    if (clinger(p, p + n, out)) return 1;
    char buf[401];
    memcpy(buf, p, (size_t)n);  /* the text is not NUL-terminated at the number's end */
    buf[n] = '\0';
    char *end = NULL;
    double x = PyOS_string_to_double(buf, &end, NULL);
    if (x == -1.0 && PyErr_Occurred()) {
        PyErr_Clear();
        return 0;
    }
    if (end != buf + n) return 0;
    *out = x;
    return 1;
}

#endif  /* CFLOAT_STRICT */

#endif
