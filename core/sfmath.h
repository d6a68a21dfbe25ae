/* Double-precision math without libm's tables, and decimal parsing (sfmath.c). */
#ifndef SF_MATH_H
#define SF_MATH_H

#include <stddef.h>

double sf_exp(double x);
double sf_log(double x);
/* log(1 + x) for x >= 0 (x - x when x is a NaN), accurate for small x too. */
double sf_log1p(double x);
double sf_pow(double base, double e); /* base > 0 */
/* sin and cos of x, for |x| < 2^20 * pi/2 (positions times frequencies). */
void sf_sincos(double x, double *s, double *c);
/* A JSON number (already validated by the grammar) to the nearest double. */
double sf_parse_double(const char *s, size_t len);

#endif
