/* queen_ext: conversions between PostgreSQL values and segment fields (see ext_convert.h). */
#include "postgres.h"

#include "common/int.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"

#include "ext_convert.h"

/* UTF-8 bytes of a text value; the value's own bytes when no conversion is needed. */
const char *
ext_text_to_utf8(text *value, size_t *len)
{
    const char *s = VARDATA_ANY(value);
    int         n = VARSIZE_ANY_EXHDR(value);
    const char *utf8 = pg_server_to_any(s, n, PG_UTF8);

    /* A converted string is a new, NUL-terminated palloc'd copy (text holds no NUL). */
    *len = (utf8 == s) ? (size_t) n : strlen(utf8);
    return utf8;
}

/* Validated (and, for another database encoding, converted) text from UTF-8 bytes. */
text *
ext_utf8_to_text(const char *utf8, size_t len)
{
    /* pg_any_to_server verifies the bytes even when no conversion is needed. */
    char       *s = pg_any_to_server(utf8, (int) len, PG_UTF8);

    if (s == utf8)
        return cstring_to_text_with_len(s, (int) len);
    return cstring_to_text(s);
}

/* Unix-epoch microseconds to a timestamptz, or 22008. */
TimestampTz
ext_timestamptz_from_unix_us(int64 us)
{
    TimestampTz ts;

    if (pg_sub_s64_overflow(us, EXT_EPOCH_SHIFT_US, &ts) || !IS_VALID_TIMESTAMP(ts))
        ereport(ERROR, (errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
                        errmsg("timestamp out of range")));
    return ts;
}

/* A finite timestamptz to Unix-epoch microseconds; false on int64 overflow. */
bool
ext_timestamptz_to_unix_us(TimestampTz ts, int64 *us)
{
    return !pg_add_s64_overflow(ts, EXT_EPOCH_SHIFT_US, us);
}
