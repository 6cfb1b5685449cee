/* queen_ext: the module itself and queen_ext.version(). The segment codec is
 * codec/queen_segment.c and codec/queen_segment_zstd.c, compiled into this library. */
#include "postgres.h"

#include "fmgr.h"
#include "utils/builtins.h"

#include <zstd.h>

#include "queen_segment.h"

PG_MODULE_MAGIC;

/* The newest SQL version this library implements: default_version in queen_ext.control,
 * which Makefile.pgxs passes as -DQUEEN_EXT_VERSION. */
#ifndef QUEEN_EXT_VERSION
#error "QUEEN_EXT_VERSION is not defined: build with Makefile.pgxs (it reads ext/queen_ext.control)"
#endif

PG_FUNCTION_INFO_V1(queen_ext_version);

/* Returns "queen_ext <version> (segment format <n>, zstd <zstd version>)"; never fails. */
Datum
queen_ext_version(PG_FUNCTION_ARGS)
{
    PG_RETURN_TEXT_P(cstring_to_text(psprintf("queen_ext %s (segment format %d, zstd %s)",
                                              QUEEN_EXT_VERSION, QSEG_VERSION,
                                              ZSTD_versionString())));
}
