/* queen_ext: the backend's zstd contexts.
 *
 * One compression and one decompression context per backend, created with zstd's own
 * allocator (malloc) on first use and kept for the life of the process. Nothing is
 * allocated per call, so an ERROR (longjmp) in the middle of a call leaks nothing: the
 * contexts stay valid and are reset by the next ZSTD_compressCCtx/ZSTD_decompressDCtx. */
#ifndef QUEEN_EXT_ZSTD_H
#define QUEEN_EXT_ZSTD_H

/* Include after postgres.h. */
#include <zstd.h>

/* The backend's compression context; raises 53200 if it cannot be created. */
extern ZSTD_CCtx *ext_zstd_cctx(void);

/* The backend's decompression context; raises 53200 if it cannot be created. */
extern ZSTD_DCtx *ext_zstd_dctx(void);

/* Frees the compression context if a high level left it holding more memory than a
 * backend should keep; the next ext_zstd_cctx() makes a new one. Call only between
 * compressions. */
extern void ext_zstd_trim(void);

#endif
