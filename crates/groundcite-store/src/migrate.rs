//! Versioned schema migrations, applied at open.
//!
//! Hand-rolled rather than `sqlx::migrate!` for two reasons: no proc-macro
//! build of sqlx, and open must be safe when several processes start at
//! once against one database. Each backend applies pending migrations in a
//! single transaction that first takes a lock every other opener waits on:
//! `BEGIN IMMEDIATE` (SQLite's write lock, waited on through
//! `busy_timeout`) or `pg_advisory_xact_lock` (PostgreSQL). The second
//! opener then sees the versions the first recorded and applies nothing.
//! Applied versions are rows of `groundcite_schema_migrations`.

use sqlx::{Executor, PgPool, SqlitePool};

use crate::error::StoreError;

/// One schema step. Versions are consecutive from 1 and never edited once
/// released: a change is a new migration.
struct Migration {
    version: i64,
    name: &'static str,
    sql: &'static str,
}

const SQLITE: &[Migration] = &[
    Migration {
        version: 1,
        name: "create_traces",
        sql: include_str!("../migrations/sqlite/0001_create_traces.sql"),
    },
    Migration {
        version: 2,
        name: "chunk_packs",
        sql: include_str!("../migrations/sqlite/0002_chunk_packs.sql"),
    },
    Migration {
        version: 3,
        name: "generation_outcome",
        sql: include_str!("../migrations/sqlite/0003_generation_outcome.sql"),
    },
];

const POSTGRES: &[Migration] = &[
    Migration {
        version: 1,
        name: "create_traces",
        sql: include_str!("../migrations/postgres/0001_create_traces.sql"),
    },
    Migration {
        version: 2,
        name: "chunk_packs",
        sql: include_str!("../migrations/postgres/0002_chunk_packs.sql"),
    },
    Migration {
        version: 3,
        name: "generation_outcome",
        sql: include_str!("../migrations/postgres/0003_generation_outcome.sql"),
    },
];

const CREATE_TABLE: &str = "CREATE TABLE IF NOT EXISTS groundcite_schema_migrations (\
     version BIGINT NOT NULL PRIMARY KEY, name TEXT NOT NULL, applied_at_ms BIGINT NOT NULL)";

const CURRENT: &str = "SELECT COALESCE(MAX(version), 0) FROM groundcite_schema_migrations";

const RECORD: &str =
    "INSERT INTO groundcite_schema_migrations (version, name, applied_at_ms) VALUES ($1, $2, $3)";

/// Arbitrary constant key of the PostgreSQL advisory lock that serializes
/// migrations ("gcstore" in ASCII).
const PG_LOCK_KEY: i64 = 0x0067_6373_746f_7265;

/// The migrations after `current`, or an error if the database is newer.
fn pending(all: &'static [Migration], current: i64) -> Result<&'static [Migration], StoreError> {
    let supported = all.last().map_or(0, |m| m.version);
    if current > supported {
        return Err(StoreError::SchemaTooNew {
            found: current,
            supported,
        });
    }
    Ok(&all[all.partition_point(|m| m.version <= current)..])
}

fn db(error: sqlx::Error) -> StoreError {
    StoreError::database("migrate", error)
}

/// Brings a SQLite database up to date.
pub(crate) async fn sqlite(pool: &SqlitePool) -> Result<(), StoreError> {
    let mut tx = pool.begin_with("BEGIN IMMEDIATE").await.map_err(db)?;
    (&mut *tx).execute(CREATE_TABLE).await.map_err(db)?;
    let current: i64 = sqlx::query_scalar(CURRENT)
        .fetch_one(&mut *tx)
        .await
        .map_err(db)?;
    for migration in pending(SQLITE, current)? {
        // A plain `&str` runs unprepared, so a file may hold several
        // statements.
        (&mut *tx).execute(migration.sql).await.map_err(db)?;
        sqlx::query(RECORD)
            .bind(migration.version)
            .bind(migration.name)
            .bind(jiff::Timestamp::now().as_millisecond())
            .execute(&mut *tx)
            .await
            .map_err(db)?;
    }
    tx.commit().await.map_err(db)
}

/// Brings a PostgreSQL database up to date.
pub(crate) async fn postgres(pool: &PgPool) -> Result<(), StoreError> {
    let mut tx = pool.begin().await.map_err(db)?;
    sqlx::query("SELECT pg_advisory_xact_lock($1)")
        .bind(PG_LOCK_KEY)
        .execute(&mut *tx)
        .await
        .map_err(db)?;
    (&mut *tx).execute(CREATE_TABLE).await.map_err(db)?;
    let current: i64 = sqlx::query_scalar(CURRENT)
        .fetch_one(&mut *tx)
        .await
        .map_err(db)?;
    for migration in pending(POSTGRES, current)? {
        // A plain `&str` runs unprepared, so a file may hold several
        // statements.
        (&mut *tx).execute(migration.sql).await.map_err(db)?;
        sqlx::query(RECORD)
            .bind(migration.version)
            .bind(migration.name)
            .bind(jiff::Timestamp::now().as_millisecond())
            .execute(&mut *tx)
            .await
            .map_err(db)?;
    }
    tx.commit().await.map_err(db)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The server awaits these futures on a multi-threaded runtime.
    #[allow(dead_code)]
    fn futures_are_send(pg: &PgPool, lite: &SqlitePool) {
        fn send<T: Send>(_: T) {}
        send(sqlite(lite));
        send(postgres(pg));
    }

    #[test]
    fn migrations_are_consecutive_from_one() {
        for all in [SQLITE, POSTGRES] {
            for (i, m) in all.iter().enumerate() {
                assert_eq!(m.version, i as i64 + 1, "{}", m.name);
            }
        }
        assert_eq!(SQLITE.len(), POSTGRES.len());
    }

    #[test]
    fn pending_skips_applied_and_refuses_newer() {
        assert_eq!(pending(SQLITE, 0).map(<[_]>::len).ok(), Some(SQLITE.len()));
        assert_eq!(
            pending(SQLITE, SQLITE.len() as i64).map(<[_]>::len).ok(),
            Some(0)
        );
        assert!(matches!(
            pending(SQLITE, 99),
            Err(StoreError::SchemaTooNew { found: 99, .. })
        ));
    }
}
