-- placeholder, replaced by the store work
CREATE TABLE meta (k TEXT PRIMARY KEY, v TEXT);
