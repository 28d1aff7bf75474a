"""PostgreSQL: pool, migrations, queries as module constants, row mapping, error translation."""
