/* queen_ext: rows inserted into a broker table without the executor (ext/ext_insert.c). */
#ifndef QUEEN_EXT_INSERT_H
#define QUEEN_EXT_INSERT_H

/* Include after postgres.h. */

/* Inserts nrows rows into queen.<table> as COPY does: one heap_multi_insert (WAL record per
 * page rather than per row), then each row's index entries (unique keys checked as an
 * INSERT checks them, 23505), after the table's NOT NULL and CHECK constraints. columns[c]
 * holds column c+1 of every row (no NULLs); ncols must be the table's number of columns.
 * Checks INSERT privilege (42501). Returns false, having inserted nothing, when the table is
 * not a plain table of ncols columns or has triggers, rules or row-level security: the
 * caller inserts with SQL then, so those always take effect. */
extern bool ext_insert_rows(const char *table, int ncols, int nrows, Datum *const *columns);

#endif
