-- 005_config_origin.sql — who stored a configuration value.
--
-- A key that names a path or a device the daemon opens (console.tty,
-- tls.ca_file) may be set only from the console, the -c file or the
-- command line (ARCHITECTURE.md §9). An older version let the web and the
-- control socket store such keys, so a stored value now counts only when
-- its row says the console stored it: 'console' or 'remote' for rows
-- written from now on, NULL for rows an older version wrote (ignored for
-- those keys, used as before for every other key).
ALTER TABLE config ADD COLUMN origin TEXT
    CHECK (origin IS NULL OR origin IN ('console', 'remote'));
