#!/usr/bin/env python3
"""PyMySQL against a MySQL-compatible server: connect, %s parameters,
executemany, transactions, and a round trip of every supported type.
Expected values are MySQL 8.0's. Run by TestPyMySQL; by hand:
    python3 pymysql_roundtrip.py --host 127.0.0.1 --port 4000
Prints every mismatch and exits 1 if there was one; prints ALL OK otherwise.
"""
import argparse
import datetime as dt
import random
import sys
from decimal import Decimal

import pymysql
from pymysql.constants import FIELD_TYPE

ap = argparse.ArgumentParser()
ap.add_argument("--host", default="127.0.0.1")
ap.add_argument("--port", type=int, default=4000)
ap.add_argument("--user", default="root")
ap.add_argument("--password", default="")
args = ap.parse_args()

failures = []
checks = 0


def check(what, got, want):
    global checks
    checks += 1
    if type(got) is not type(want) or got != want:
        g, w = repr(got), repr(want)
        if len(g) > 120:
            g = g[:120] + "..."
        if len(w) > 120:
            w = w[:120] + "..."
        failures.append(f"{what}: got {g}, want {w}")
        print(f"FAIL {what}: got {g}, want {w}")


def connect(db=None, autocommit=False):
    return pymysql.connect(host=args.host, port=args.port, user=args.user, password=args.password,
                           database=db, charset="utf8mb4", autocommit=autocommit, binary_prefix=True,
                           init_command="SET time_zone = '+00:00'", connect_timeout=10, read_timeout=60)


admin = connect(autocommit=True)
with admin.cursor() as c:
    c.execute("SELECT 1 + %s, CONCAT(%s, %s)", (41, "日本", "🐟"))
    check("SELECT 1 + %s", c.fetchone(), (42, "日本🐟"))
    c.execute("DROP DATABASE IF EXISTS pytest")
    c.execute("CREATE DATABASE pytest CHARACTER SET utf8mb4")
admin.close()

conn = connect("pytest")
rng = random.Random(42)
blob = bytes(rng.getrandbits(8) for _ in range(65535))
allbytes = bytes(range(256))
text = "日本語🐟a" * 4000

# (column type, cursor.description type code, [(parameter, expected value)])
# A parameter None inserts NULL and expects None.
cases = [
    ("TINYINT", FIELD_TYPE.TINY, [(-128, -128), (127, 127), (0, 0)]),
    ("TINYINT UNSIGNED", FIELD_TYPE.TINY, [(255, 255)]),
    ("SMALLINT", FIELD_TYPE.SHORT, [(-32768, -32768), (32767, 32767)]),
    ("SMALLINT UNSIGNED", FIELD_TYPE.SHORT, [(65535, 65535)]),
    ("MEDIUMINT", FIELD_TYPE.INT24, [(-8388608, -8388608), (8388607, 8388607)]),
    ("MEDIUMINT UNSIGNED", FIELD_TYPE.INT24, [(16777215, 16777215)]),
    ("INT", FIELD_TYPE.LONG, [(-2147483648, -2147483648), (2147483647, 2147483647)]),
    ("INT UNSIGNED", FIELD_TYPE.LONG, [(4294967295, 4294967295)]),
    ("BIGINT", FIELD_TYPE.LONGLONG, [(-2**63, -2**63), (2**63 - 1, 2**63 - 1)]),
    ("BIGINT UNSIGNED", FIELD_TYPE.LONGLONG, [(2**64 - 1, 2**64 - 1), (2**63, 2**63), (0, 0)]),
    ("DECIMAL(10,2)", FIELD_TYPE.NEWDECIMAL, [(Decimal("12345678.90"), Decimal("12345678.90")), (Decimal("-0.01"), Decimal("-0.01")),
                                              (Decimal("2.345"), Decimal("2.35")), ("-2.345", Decimal("-2.35")), (7, Decimal("7.00"))]),
    ("DECIMAL(65,30)", FIELD_TYPE.NEWDECIMAL, [(Decimal("12345678901234567890123456789012345.123456789012345678901234567890"),
                                               Decimal("12345678901234567890123456789012345.123456789012345678901234567890"))]),
    ("FLOAT", FIELD_TYPE.FLOAT, [(3.14, 3.14), (-0.5, -0.5), (0.0, 0.0), (1234567.89, 1234570.0)]),  # 6 significant digits as text
    ("DOUBLE", FIELD_TYPE.DOUBLE, [(0.1, 0.1), (-1.7976931348623157e308, -1.7976931348623157e308), (2.2250738585072014e-308, 2.2250738585072014e-308)]),
    ("CHAR(10)", FIELD_TYPE.STRING, [("ab  ", "ab"), ("日本語日本語日本語日", "日本語日本語日本語日"), ("", "")]),
    ("VARCHAR(100)", FIELD_TYPE.VAR_STRING, [("héllo wörld ✓ 日本語 🐟", "héllo wörld ✓ 日本語 🐟"),
                                              ("it's \"q\" \\ b\n\t\x00\x1a%s %%", "it's \"q\" \\ b\n\t\x00\x1a%s %%"), ("", "")]),
    ("TEXT", FIELD_TYPE.BLOB, [(text, text)]),
    ("BINARY(8)", FIELD_TYPE.STRING, [(b"\x00\x01\xff", b"\x00\x01\xff\x00\x00\x00\x00\x00")]),
    ("VARBINARY(300)", FIELD_TYPE.VAR_STRING, [(allbytes, allbytes), (b"", b"")]),
    ("BLOB", FIELD_TYPE.BLOB, [(blob, blob), (b"\x00'\"\\\n\r\x1a", b"\x00'\"\\\n\r\x1a")]),
    ("DATE", FIELD_TYPE.DATE, [(dt.date(2024, 2, 29), dt.date(2024, 2, 29)), ("1000-01-01", dt.date(1000, 1, 1)), (dt.date(9999, 12, 31), dt.date(9999, 12, 31))]),
    ("DATETIME(6)", FIELD_TYPE.DATETIME, [(dt.datetime(2024, 2, 29, 13, 45, 56, 123456), dt.datetime(2024, 2, 29, 13, 45, 56, 123456)),
                                          ("9999-12-31 23:59:59.999999", dt.datetime(9999, 12, 31, 23, 59, 59, 999999)),
                                          (dt.datetime(2000, 1, 1), dt.datetime(2000, 1, 1))]),
    ("TIMESTAMP", FIELD_TYPE.TIMESTAMP, [(dt.datetime(2038, 1, 19, 3, 14, 7), dt.datetime(2038, 1, 19, 3, 14, 7)),
                                         ("1970-01-01 00:00:01", dt.datetime(1970, 1, 1, 0, 0, 1)),
                                         ("2024-02-29 13:45:56.5", dt.datetime(2024, 2, 29, 13, 45, 57))]),
    ("TIME", FIELD_TYPE.TIME, [("12:34:56", dt.timedelta(hours=12, minutes=34, seconds=56)),
                               ("-838:59:59", -dt.timedelta(hours=838, minutes=59, seconds=59)),
                               (dt.timedelta(hours=1, seconds=1), dt.timedelta(hours=1, seconds=1))]),
    ("TIME(6)", FIELD_TYPE.TIME, [("-01:02:03.000004", -dt.timedelta(hours=1, minutes=2, seconds=3, microseconds=4))]),
]

with conn.cursor() as c:
    for i, (typ, code, vals) in enumerate(cases):
        table = f"rt_{i}"
        c.execute(f"CREATE TABLE {table} (id INT PRIMARY KEY, v {typ} NULL)")
        rows = [(j + 1, p) for j, (p, _) in enumerate(vals)] + [(len(vals) + 1, None)]
        try:
            c.executemany(f"INSERT INTO {table} (id, v) VALUES (%s, %s)", rows)
        except pymysql.MySQLError as e:
            failures.append(f"{typ}: insert: {e}")
            print(f"FAIL {typ}: insert: {e}")
            continue
        conn.commit()
        c.execute(f"SELECT v FROM {table} ORDER BY id")
        check(f"{typ}: description type code", c.description[0][1], code)
        got = [r[0] for r in c.fetchall()]
        want = [w for _, w in vals] + [None]
        if len(got) != len(want):
            check(f"{typ}: row count", len(got), len(want))
            continue
        for (p, _), g, w in zip(vals + [(None, None)], got, want):
            shown = repr(p) if len(repr(p)) < 50 or not hasattr(p, "__len__") else f"{type(p).__name__} of length {len(p)}"
            check(f"{typ} <- {shown}", g, w)
        # The same values as %s parameters in a WHERE clause.
        for j, (p, w) in enumerate(vals):
            if typ.startswith(("FLOAT", "TEXT", "BLOB")) or isinstance(p, str) and p != w:
                continue
            if isinstance(w, dt.timedelta) and w < dt.timedelta(0):
                continue  # PyMySQL's escape_timedelta mangles negative values
            c.execute(f"SELECT id FROM {table} WHERE v = %s", (w,))
            check(f"{typ}: WHERE v = %s ({w!r:.40})", [r[0] for r in c.fetchall()], [j + 1])

    # Strict mode errors reach the client with their codes.
    c.execute("CREATE TABLE errs (id INT PRIMARY KEY, a TINYINT, c VARCHAR(3))")
    for sql, params, code in [("INSERT INTO errs (id, a) VALUES (%s, %s)", (1, 128), 1264),
                              ("INSERT INTO errs (id, c) VALUES (%s, %s)", (1, "abcd"), 1406),
                              ("INSERT INTO errs (id, c) VALUES (%s, %s)", (1, "🐟🐟🐟🐟"), 1406)]:
        try:
            c.execute(sql, params)
            check(f"{sql} {params!r}: error code", None, code)
        except pymysql.MySQLError as e:
            check(f"{sql} {params!r}: error code", e.args[0], code)
    conn.rollback()

    # Transactions: commit is visible to another connection, rollback undoes.
    c.execute("CREATE TABLE tx (id INT PRIMARY KEY, v VARCHAR(10))")
    conn.commit()
    other = connect("pytest", autocommit=True)
    oc = other.cursor()
    conn.begin()
    c.executemany("INSERT INTO tx VALUES (%s, %s)", [(1, "one"), (2, "two"), (3, "three")])
    check("executemany rowcount", c.rowcount, 3)
    c.execute("SELECT COUNT(*) FROM tx")
    check("own uncommitted rows", c.fetchone()[0], 3)
    oc.execute("SELECT COUNT(*) FROM tx")
    check("another connection before commit", oc.fetchone()[0], 0)
    conn.commit()
    oc.execute("SELECT COUNT(*) FROM tx")
    check("another connection after commit", oc.fetchone()[0], 3)
    conn.begin()
    c.execute("UPDATE tx SET v = %s WHERE id = %s", ("changed", 1))
    check("update rowcount", c.rowcount, 1)
    c.execute("DELETE FROM tx WHERE id = %s", (2,))
    c.execute("INSERT INTO tx VALUES (%s, %s)", (4, "four"))
    conn.rollback()
    c.execute("SELECT id, v FROM tx ORDER BY id")
    check("after rollback", c.fetchall(), ((1, "one"), (2, "two"), (3, "three")))
    # Auto-increment and lastrowid.
    c.execute("CREATE TABLE ai (id BIGINT AUTO_INCREMENT PRIMARY KEY, v VARCHAR(5))")
    c.execute("INSERT INTO ai (v) VALUES (%s)", ("a",))
    check("lastrowid", c.lastrowid, 1)
    conn.commit()
    other.close()

with conn.cursor() as c:
    c.execute("DROP DATABASE pytest")
conn.close()

if failures:
    print(f"{len(failures)} of {checks} checks failed")
    sys.exit(1)
print(f"ALL OK ({checks} checks)")
