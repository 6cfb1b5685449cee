/* queen_ext: conversions between PostgreSQL values and segment fields.
 *
 * Text in a segment is UTF-8, in the database it is in the database encoding; created_at
 * in a segment is microseconds since the Unix epoch, a timestamptz counts from 2000-01-01. */
#ifndef QUEEN_EXT_CONVERT_H
#define QUEEN_EXT_CONVERT_H

/* Include after postgres.h. */
#include "datatype/timestamp.h"

/* Microseconds between 1970-01-01 and 2000-01-01 (the Unix and the PostgreSQL epoch). */
#define EXT_EPOCH_SHIFT_US \
    ((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * USECS_PER_DAY)

/* The bytes of a text value in UTF-8 (the value itself when the database is UTF-8, else
 * a palloc'd conversion); *len gets their number. Raises PostgreSQL's conversion errors. */
extern const char *ext_text_to_utf8(text *value, size_t *len);

/* A text value from len bytes of UTF-8, converted to the database encoding; invalid UTF-8
 * (including a zero byte) raises 22021 exactly as convert_from(..., 'UTF8') does. */
extern text *ext_utf8_to_text(const char *utf8, size_t len);

/* A timestamptz from microseconds since the Unix epoch; raises 22008 "timestamp out of
 * range" outside the timestamptz range, as the SQL codec does. */
extern TimestampTz ext_timestamptz_from_unix_us(int64 us);

/* Microseconds since the Unix epoch of a finite timestamptz; false if they do not fit in
 * 64 bits (the last 30,000 years of the timestamptz range). */
extern bool ext_timestamptz_to_unix_us(TimestampTz ts, int64 *us);

#endif
