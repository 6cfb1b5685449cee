/* queen_ext: the backend's zstd contexts (see ext_zstd.h). */
#include "postgres.h"

#include "ext_zstd.h"

/* A compression context above this size (high levels on large segments) is freed after
 * use rather than kept for the life of the backend. */
#define EXT_ZSTD_KEEP_CCTX_BYTES ((size_t) 32 * 1024 * 1024)

static ZSTD_CCtx *ext_cctx = NULL;
static ZSTD_DCtx *ext_dctx = NULL;

/* Returns the backend's compression context, creating it once; never NULL. */
ZSTD_CCtx *
ext_zstd_cctx(void)
{
    if (ext_cctx == NULL)
    {
        ext_cctx = ZSTD_createCCtx();
        if (ext_cctx == NULL)
            ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY),
                            errmsg("out of memory"),
                            errdetail("Cannot create a zstd compression context.")));
    }
    return ext_cctx;
}

/* Returns the backend's decompression context, creating it once; never NULL. */
ZSTD_DCtx *
ext_zstd_dctx(void)
{
    if (ext_dctx == NULL)
    {
        ext_dctx = ZSTD_createDCtx();
        if (ext_dctx == NULL)
            ereport(ERROR, (errcode(ERRCODE_OUT_OF_MEMORY),
                            errmsg("out of memory"),
                            errdetail("Cannot create a zstd decompression context.")));
    }
    return ext_dctx;
}

/* Frees an oversized compression context; leaves a normal one alone. Never raises. */
void
ext_zstd_trim(void)
{
    if (ext_cctx != NULL && ZSTD_sizeof_CCtx(ext_cctx) > EXT_ZSTD_KEEP_CCTX_BYTES)
    {
        ZSTD_freeCCtx(ext_cctx);
        ext_cctx = NULL;
    }
}
