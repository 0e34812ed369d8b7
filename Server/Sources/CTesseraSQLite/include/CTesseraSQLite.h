#ifndef C_TESSERA_SQLITE_H
#define C_TESSERA_SQLITE_H

/// Turns on SQLite's query planner stability guarantee (SQLITE_DBCONFIG_ENABLE_QPSG) for one
/// connection. `sqlite3_db_config` is variadic, which Swift cannot call, hence this shim.
///
/// Without it SQLite 3.53 marks bound parameters as plan-relevant and re-prepares a cached
/// statement on every new binding, which made the parser the hottest code of a heartbeat.
/// Returns the SQLite result code.
int tessera_sqlite_enable_qpsg(void *connection);

#endif
