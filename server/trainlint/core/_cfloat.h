/* float()'s double of a decimal text without the general parser, for the compiled scanners (_cscan.c, _cjsonl.c,
 * _ctext.c include it): Clinger's fast path, exact dyadic values and Eisel-Lemire's path (fast_double), one copy of
 * the number code that must give float()'s double bit for bit (each module's tests hold it against float()). */
#ifndef TRAINLINT_CFLOAT_H
#define TRAINLINT_CFLOAT_H

#include <Python.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

/* A decimal as float() reads it: [sign] digits [. digits] [e|E [sign] 1-4 digits], nothing else. */
typedef struct {
    uint64_t w;  /* its significant digits (leading zeros dropped), at most 19: below 2^64 */
    int e;       /* the power of ten w is scaled by */
    int neg;
} Decimal;

/* 1 and *d set: p..end is such a decimal with at most 19 significant digits; 0: not this case (more digits, no
 * digit, a longer exponent, nan/inf, other text: PyOS_string_to_double decides). */
static int decimal(const char *p, const char *end, Decimal *d) {
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
            if (++digits > 19) return 0;
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
    if (p != end) return 0;
    d->w = w;
    d->e = e - frac;
    d->neg = neg;
    return 1;
}

/* Clinger's fast path: a decimal of at most 2^53 as its digits and a power of ten of at most 22 are both exact
 * doubles, so one multiplication or division rounds once, correctly: the double float() (a correctly rounded
 * parser) returns. 1: *out set; 0: not this case. Most logged numbers (4 to 16 significant digits) are this case,
 * at a tenth of the general parser's cost. Only where doubles are evaluated as doubles (not x87's extended
 * precision). */
static const double POW10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};

static int clinger_decimal(const Decimal *d, double *out) {
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0
    if (d->w > ((uint64_t)1 << 53)) return 0;
    double x = (double)d->w;
    if (d->w == 0) {
        x = 0.0;
    } else if (d->e < 0) {
        if (d->e < -22) return 0;
        x /= POW10[-d->e];
    } else {
        if (d->e > 22) return 0;
        x *= POW10[d->e];
    }
    *out = d->neg ? -x : x;
    return 1;
#else
    (void)d;
    (void)out;
    return 0;
#endif
}

/* clinger(p, end, out): the text p..end by Clinger's path alone (_cjsonl.c's reader; inline: the other
 * modules call fast_double). */
static inline int clinger(const char *p, const char *end, double *out) {
    Decimal d;
    return decimal(p, end, &d) && clinger_decimal(&d, out);
}


#ifdef __SIZEOF_INT128__
#include "_cpow10.h"

/* Eisel and Lemire's path (as Go's strconv.eiselLemire64, whose table _cpow10.h is): w times the 128-bit mantissa
 * of 10^e, rounded down, brackets the exact product closely enough that its top 54 bits decide the correctly
 * rounded double, except when the product sits too near a halfway point to tell: then 0 (as for a subnormal or an
 * overflow), and PyOS_string_to_double decides. It reads the 17-19 digit values (float32 values printed as doubles:
 * a fifth of a real Lightning metrics.csv's cells) Clinger's path cannot, at a fraction of the general parser's
 * cost. 1: *out set. */
static int eisel_lemire(const Decimal *d, double *out) {
    uint64_t man = d->w;
    if (man == 0 || d->e < POW10_MIN_EXP || d->e > POW10_MAX_EXP) return 0;
    const uint64_t *pow = POW10_128[d->e - POW10_MIN_EXP];
    int clz = __builtin_clzll(man);
    man <<= clz;
    uint64_t exp2 = (uint64_t)(((217706 * d->e) >> 16) + 64 + 1023) - (uint64_t)clz;
    unsigned __int128 x = (unsigned __int128)man * pow[1];
    uint64_t hi = (uint64_t)(x >> 64), lo = (uint64_t)x;
    if ((hi & 0x1FF) == 0x1FF && lo + man < man) {  /* the low half of the mantissa could carry into hi */
        unsigned __int128 y = (unsigned __int128)man * pow[0];
        uint64_t yhi = (uint64_t)(y >> 64), ylo = (uint64_t)y;
        uint64_t mlo = lo + yhi, mhi = hi + (mlo < lo);
        if ((mhi & 0x1FF) == 0x1FF && mlo + 1 == 0 && ylo + man < man) return 0;
        hi = mhi;
        lo = mlo;
    }
    uint64_t msb = hi >> 63, mant = hi >> (msb + 9);
    exp2 -= 1 ^ msb;
    if (lo == 0 && (hi & 0x1FF) == 0 && (mant & 3) == 1) return 0;  /* halfway between two doubles: ambiguous */
    mant += mant & 1;
    mant >>= 1;
    if (mant >> 53) {
        mant >>= 1;
        exp2++;
    }
    if (exp2 - 1 >= 0x7FF - 1) return 0;  /* a subnormal, or past the largest double */
    uint64_t bits = exp2 << 52 | (mant & 0x000FFFFFFFFFFFFFull) | (uint64_t)d->neg << 63;
    memcpy(out, &bits, sizeof bits);
    return 1;
}
#else
static int eisel_lemire(const Decimal *d, double *out) {  /* no 128-bit product: PyOS_string_to_double decides */
    (void)d;
    (void)out;
    return 0;
}
#endif

/* A decimal that is exactly a double's value w / 10^k = (w / 5^k) / 2^k (k at most 27: 5^k below 2^63), with
 * w / 5^k an integer of at most 2^53: that integer is an exact double and the power of two scales it exactly
 * (the result is at least 2^-27: no subnormal), so this is float()'s double. Writers print float32 values so, in
 * full (1410.0533447265625): 10% of the long cells of the real Lightning metrics.csv, on which Eisel-Lemire's
 * rounded-down product sits just under the exact value and declines. 1: *out set. */
static int exact_dyadic(const Decimal *d, double *out) {
    static const uint64_t POW5[28] = {1ull, 5ull, 25ull, 125ull, 625ull, 3125ull, 15625ull, 78125ull, 390625ull,
        1953125ull, 9765625ull, 48828125ull, 244140625ull, 1220703125ull, 6103515625ull, 30517578125ull,
        152587890625ull, 762939453125ull, 3814697265625ull, 19073486328125ull, 95367431640625ull,
        476837158203125ull, 2384185791015625ull, 11920928955078125ull, 59604644775390625ull,
        298023223876953125ull, 1490116119384765625ull, 7450580596923828125ull};
    if (d->e >= 0 || d->e < -27 || d->w % POW5[-d->e] != 0) return 0;
    uint64_t q = d->w / POW5[-d->e];
    if (q > ((uint64_t)1 << 53)) return 0;
    double x = ldexp((double)q, d->e);
    *out = d->neg ? -x : x;
    return 1;
}

/* fast_double(p, end, out): Clinger's path, else an exact dyadic value, else Eisel-Lemire's; 0: none (the caller
 * asks PyOS_string_to_double). */
static int fast_double(const char *p, const char *end, double *out) {
    Decimal d;
    if (!decimal(p, end, &d)) return 0;
    return clinger_decimal(&d, out) || exact_dyadic(&d, out) || eisel_lemire(&d, out);
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
    if (fast_double(p, p + n, out)) return 1;  /* its grammar is a subset of NUMCHAR's bytes: no check first */
    for (Py_ssize_t i = 0; i < n; i++)
        if (!NUMCHAR[(unsigned char)p[i]]) return 0;
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
