#include "CTesseraSQLite.h"

// The sqlite-nio build of SQLite prefixes its symbols; VaporCSQLite is linked into the same binary.
struct sqlite3;
extern int sqlite_nio_sqlite3_db_config(struct sqlite3 *, int op, ...);

enum { tessera_sqlite_dbconfig_enable_qpsg = 1007 };  // SQLITE_DBCONFIG_ENABLE_QPSG

int tessera_sqlite_enable_qpsg(void *connection) {
    int enabled = 0;
    return sqlite_nio_sqlite3_db_config(
        (struct sqlite3 *)connection, tessera_sqlite_dbconfig_enable_qpsg, 1, &enabled);
}
