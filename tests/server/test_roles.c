/* test_roles.c - C unit tests of the role table (server/hub/roles.c): a row
 * for every command kind and every REST route of server/wire/rest_route.c,
 * the roles the rooms' design gives each, the refusal sentence, the copy of
 * the table in protocol/PROTOCOL.md ("Rooms and roles", compared row by row
 * both ways), and the room-name rule (server/hub/room_name.c).
 *
 *   test_roles_san [NAME...]   (run from the repository's root; FLUID_PROTOCOL_MD overrides the path)
 * Prints "N passed, N failed, 0 skipped". */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "command.h"
#include "rest_route.h"
#include "roles.h"
#include "room_name.h"
#include "testlib.h"

static void test_every_kind_has_a_row(void) {
    for (int k = 0; k < CMD_KIND_COUNT; k++) {
        CHECK(role_commands[k].kind == (cmd_kind)k, "row %d is %s's, not %s's", k, cmd_kind_name(role_commands[k].kind),
              cmd_kind_name((cmd_kind)k));
        role r = role_needed_for_command((cmd_kind)k);
        CHECK(r >= ROLE_VIEWER && r <= ROLE_OWNER, "%s needs %s: a room's command needs at most the owner",
              cmd_kind_name((cmd_kind)k), role_name(r));
    }
    CHECK(role_needed_for_command(CMD_KIND_COUNT) == ROLE_ADMIN, "a kind outside the enum needs the administrator");
    CHECK(role_needed_for_command((cmd_kind)-1) == ROLE_ADMIN, "a kind outside the enum needs the administrator");
    REPORT("%d command kinds, each with a row", CMD_KIND_COUNT);
}

/* The roles of the rooms' design, written out again by kind. */
static void test_kinds_by_role(void) {
    static const cmd_kind viewer[] = {CMD_CURSOR, CMD_KEYFRAME, CMD_PACE, CMD_AUTH, CMD_GET_OBSTACLES};
    static const cmd_kind player[] = {CMD_PUSH,         CMD_BODY_GRAB,       CMD_BODY_DRAG,    CMD_BODY_RELEASE,
                                      CMD_BODY_IMPULSE, CMD_BODY_CREATE,     CMD_BODY_DESTROY, CMD_HEAT,
                                      CMD_OBSTACLE_ADD, CMD_OBSTACLE_REMOVE, CMD_MESH_UPLOAD};
    static const cmd_kind editor[] = {CMD_SET_PARAM, CMD_EMITTER,      CMD_LOAD_SCENE, CMD_SET_SOLVER,
                                      CMD_HEATER,    CMD_PAUSE,        CMD_RESUME,     CMD_STEP,
                                      CMD_RESTORE,   CMD_RECORD_START, CMD_RECORD_STOP};
    const struct {
        const cmd_kind *k;
        size_t n;
        role r;
    } groups[] = {{viewer, sizeof viewer / sizeof *viewer, ROLE_VIEWER},
                  {player, sizeof player / sizeof *player, ROLE_PLAYER},
                  {editor, sizeof editor / sizeof *editor, ROLE_EDITOR}};
    int n = 0;
    for (size_t g = 0; g < sizeof groups / sizeof *groups; g++)
        for (size_t i = 0; i < groups[g].n; i++, n++)
            CHECK(role_needed_for_command(groups[g].k[i]) == groups[g].r, "%s needs %s, not %s",
                  cmd_kind_name(groups[g].k[i]), role_name(groups[g].r),
                  role_name(role_needed_for_command(groups[g].k[i])));
    /* every kind that changes the world needs more than a viewer */
    for (int k = 0; k < CMD_KIND_COUNT; k++)
        if (cmd_kind_mutates((cmd_kind)k))
            CHECK(role_needed_for_command((cmd_kind)k) >= ROLE_PLAYER, "%s changes the world but a viewer may send it",
                  cmd_kind_name((cmd_kind)k));
    REPORT("%d kinds checked by role", n);
}

static void test_names(void) {
    for (int r = 0; r < ROLE_COUNT; r++) {
        role got = ROLE_COUNT;
        const char *nm = role_name((role)r);
        CHECK(role_parse(nm, strlen(nm), &got) == 0 && got == (role)r, "'%s' parses back", nm);
        CHECK(strlen(nm) <= ROLE_NAME_MAX, "'%s' is longer than ROLE_NAME_MAX", nm);
        for (int s = 0; s < ROLE_COUNT; s++)
            CHECK(role_allows((role)r, (role)s) == (r >= s), "%s allows %s: %d", nm, role_name((role)s),
                  role_allows((role)r, (role)s));
    }
    static const char *const bad[] = {"", "Viewer", "view", "viewers", "root", " viewer", "admin "};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        role got = ROLE_OWNER;
        CHECK(role_parse(bad[i], strlen(bad[i]), &got) == -1 && got == ROLE_OWNER, "'%s' is no role", bad[i]);
    }
    role got = ROLE_OWNER;
    CHECK(role_parse("viewer\0x", 8, &got) == -1, "a NUL inside is no role");
    CHECK(role_parse("viewer", 5, &got) == -1, "'viewe' is no role");
    CHECK(!strcmp(role_name(ROLE_COUNT), "unknown"), "outside the enum: %s", role_name(ROLE_COUNT));
}

/* Every route of rest_route.c has a row; every row is a route of rest_route.c
 * or of the rooms; a route carrying a command needs that command's role. */
static void test_every_route_has_a_row(void) {
    int matched = 0;
    for (int i = 0; i < rest_route_count; i++) {
        const rest_route_def *d = &rest_routes[i];
        role r = ROLE_COUNT;
        int rc = role_needed_for_route(rest_method_name(d->method), d->path, &r);
        CHECK(rc == 0, "%s %s has no row in role_routes", rest_method_name(d->method), d->path);
        if (rc) continue;
        matched++;
        if (d->kind != CMD_NONE)
            CHECK(r == role_needed_for_command(d->kind), "%s %s needs %s but its command %s needs %s",
                  rest_method_name(d->method), d->path, role_name(r), cmd_kind_name(d->kind),
                  role_name(role_needed_for_command(d->kind)));
        else if (d->handler == RH_VIEW || d->handler == RH_RECFILE)
            CHECK(d->method == HM_GET, "a read is a GET: %s", d->path);
    }
    int rooms = 0;
    for (int j = 0; j < role_route_count; j++) {
        const role_route_row *w = &role_routes[j];
        bool found = false;
        for (int i = 0; i < rest_route_count && !found; i++)
            found =
                !strcmp(rest_method_name(rest_routes[i].method), w->method) && !strcmp(rest_routes[i].path, w->path);
        bool room_route = !strncmp(w->path, "/api/rooms", 10) && (!w->path[10] || w->path[10] == '/');
        CHECK(found || room_route, "%s %s is in role_routes but no route of rest_route.c or of the rooms", w->method,
              w->path);
        rooms += room_route;
        for (int k = 0; k < j; k++)
            CHECK(strcmp(role_routes[k].method, w->method) || strcmp(role_routes[k].path, w->path),
                  "%s %s has two rows", w->method, w->path);
    }
    CHECK(matched == rest_route_count, "%d of %d routes have a row", matched, rest_route_count);
    REPORT("%d REST routes and %d routes of rooms, each with a row", matched, rooms);
}

static void test_route_lookup(void) {
    const struct {
        const char *method, *path;
        int rc;
        role r;
    } cases[] = {
        {"GET", "/api/stats", 0, ROLE_VIEWER},
        {"GET", "/api/rooms/{room}/stats", 0, ROLE_VIEWER},
        {"POST", "/api/rooms/{room}/push", 0, ROLE_PLAYER},
        {"POST", "/api/rooms/{room}/scene", 0, ROLE_EDITOR},
        {"GET", "/api/rooms/{room}/clients", 0, ROLE_OWNER},
        {"POST", "/api/rooms/{room}/invites", 0, ROLE_OWNER},
        {"POST", "/api/rooms/{room}/clients/{id}/kick", 0, ROLE_OWNER},
        {"POST", "/api/rooms", 0, ROLE_ADMIN},
        {"GET", "/api/rooms", 0, ROLE_VIEWER},
        {"POST", "/api/rooms/{room}/rooms", -1, ROLE_COUNT}, /* creating rooms is not a room's route */
        {"GET", "/api/rooms/{room}/rooms", -1, ROLE_COUNT},
        {"GET", "/api/rooms/{room}/metrics", -1, ROLE_COUNT}, /* /metrics is not under /api */
        {"GET", "/api/nothing", -1, ROLE_COUNT},
        {"PUT", "/api/stats", -1, ROLE_COUNT},
        {"POST", "/api/rooms/{room}/", -1, ROLE_COUNT},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        role r = ROLE_COUNT;
        int rc = role_needed_for_route(cases[i].method, cases[i].path, &r);
        CHECK(rc == cases[i].rc && r == cases[i].r, "%s %s: rc %d role %s", cases[i].method, cases[i].path, rc,
              role_name(r));
    }
}

static void test_refusal_sentence(void) {
    char buf[160];
    role_refusal(buf, sizeof buf, "push", ROLE_PLAYER, ROLE_VIEWER);
    CHECK(!strcmp(buf, "'push' needs the player role; this connection is a viewer."), "%s", buf);
    role_refusal(buf, sizeof buf, "POST /api/rooms/lab/invites", ROLE_OWNER, ROLE_EDITOR);
    CHECK(!strcmp(buf, "'POST /api/rooms/lab/invites' needs the owner role; this connection is an editor."), "%s", buf);
    char small[16];
    role_refusal(small, sizeof small, "load_scene", ROLE_EDITOR, ROLE_PLAYER);
    CHECK(strlen(small) == sizeof small - 1, "truncated to its buffer: '%s'", small);
}

/* ---- PROTOCOL.md's copy of the table ------------------------------------- */

static char *read_text(const char *path) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char *s = malloc((size_t)n + 1);
    if (s && fread(s, 1, (size_t)n, f) != (size_t)n) n = 0;
    if (s) s[n] = 0;
    fclose(f);
    return s;
}

/* The cells of a markdown table row "| a | `b` | c |" (backquotes dropped). */
static int row_cells(const char *line, size_t len, char cells[4][64]) {
    int n = 0;
    size_t i = 0;
    if (!len || line[0] != '|') return 0;
    while (i < len && n < 4) {
        i++; /* past '|' */
        size_t start = i;
        while (i < len && line[i] != '|') i++;
        if (i >= len) break;
        size_t a = start, b = i;
        while (a < b && (line[a] == ' ' || line[a] == '`')) a++;
        while (b > a && (line[b - 1] == ' ' || line[b - 1] == '`')) b--;
        snprintf(cells[n++], 64, "%.*s", (int)(b - a), line + a);
    }
    return n;
}

/* Compares the marked table "<!-- role-table: WHAT -->" of doc with the C
 * table; prints each difference; returns how many. */
static int compare_table(const char *doc, const char *what) {
    char mark[64];
    snprintf(mark, sizeof mark, "<!-- role-table: %s -->", what);
    const char *p = strstr(doc, mark);
    if (!p) {
        printf("    PROTOCOL.md has no '%s'\n", mark);
        return 1;
    }
    const char *end = strstr(p, "<!-- /role-table -->");
    if (!end) return 1;
    bool commands = !strcmp(what, "commands");
    int total = commands ? CMD_KIND_COUNT : role_route_count, diffs = 0, rows = 0;
    char seen[256] = {0};
    for (const char *l = strchr(p, '\n') + 1; l < end;) {
        const char *nl = strchr(l, '\n');
        size_t len = (size_t)(nl - l);
        char c[4][64];
        int n = row_cells(l, len, c);
        l = nl + 1;
        if (n < 2 || !strncmp(c[0], "---", 3) || !strcmp(c[0], "method") || strstr(c[0], "command")) continue;
        rows++;
        role r = ROLE_COUNT;
        const char *rname = commands ? c[1] : c[2];
        if (role_parse(rname, strlen(rname), &r)) {
            printf("    PROTOCOL.md: '%s' in row %s is no role\n", rname, c[0]);
            diffs++;
            continue;
        }
        int idx = -1;
        for (int i = 0; i < total && idx < 0; i++)
            if (commands ? !role_commands[i].internal && !strcmp(cmd_kind_name((cmd_kind)i), c[0])
                         : !strcmp(role_routes[i].method, c[0]) && !strcmp(role_routes[i].path, c[1]))
                idx = i;
        role want = idx < 0 ? ROLE_COUNT : commands ? role_commands[idx].needed : role_routes[idx].needed;
        bool twice = idx >= 0 && seen[idx]++;
        if (idx < 0 || want != r || twice) {
            printf("    PROTOCOL.md: row '%s%s%s' -> %s; the server's table: %s\n", c[0], commands ? "" : " ",
                   commands ? "" : c[1], rname,
                   idx < 0 ? "no such row"
                   : twice ? "a second row"
                           : role_name(want));
            diffs++;
        }
    }
    for (int i = 0; i < total; i++) {
        if (seen[i] || (commands && role_commands[i].internal)) continue;
        printf("    PROTOCOL.md lacks the row of %s%s%s\n",
               commands ? cmd_kind_name((cmd_kind)i) : role_routes[i].method, commands ? "" : " ",
               commands ? "" : role_routes[i].path);
        diffs++;
    }
    REPORT("PROTOCOL.md's %s table: %d rows, %d differences", what, rows, diffs);
    return diffs;
}

static void test_protocol_md_agrees(void) {
    const char *path = getenv("FLUID_PROTOCOL_MD") ? getenv("FLUID_PROTOCOL_MD") : "protocol/PROTOCOL.md";
    char *doc = read_text(path);
    CHECK(doc != NULL, "cannot read %s (run from the repository's root)", path);
    if (!doc) return;
    CHECK(strstr(doc, "## Rooms and roles") != NULL, "PROTOCOL.md has no section 'Rooms and roles'");
    CHECK(compare_table(doc, "commands") == 0, "PROTOCOL.md's command table differs from server/hub/roles.c");
    CHECK(compare_table(doc, "routes") == 0, "PROTOCOL.md's route table differs from server/hub/roles.c");

    /* the comparison finds a changed role, a missing row and an extra row */
    char *bad = malloc(strlen(doc) + 64);
    strcpy(bad, doc);
    char *row = strstr(bad, "| `push` | player |");
    CHECK(row != NULL, "the push row");
    if (row) memcpy(row, "| `push` | viewer |", strlen("| `push` | viewer |"));
    CHECK(compare_table(bad, "commands") == 1, "a changed role is one difference");
    static const char push_row[] = "| POST | `/api/push` | player |\n",
                      pish_row[] = "| POST | `/api/pish` | player |\n";
    strcpy(bad, doc);
    row = strstr(bad, push_row);
    if (row) memmove(row, row + strlen(push_row), strlen(row + strlen(push_row)) + 1);
    CHECK(row && compare_table(bad, "routes") == 1, "a missing row is one difference");
    strcpy(bad, doc);
    row = strstr(bad, push_row);
    if (row) memcpy(row, pish_row, strlen(pish_row));
    CHECK(row && compare_table(bad, "routes") == 2, "a renamed row is an unknown row and a missing one");
    free(bad);
    free(doc);
}

/* ---- Room names ----------------------------------------------------------- */

static void test_room_names(void) {
    static const char *const good[] = {"a", "lab", "default",  "a-1",
                                       "0", "-",   "room-2-b", "abcdefghijklmnopqrstuvwxyz01234"};
    for (size_t i = 0; i < sizeof good / sizeof *good; i++)
        CHECK(room_name_ok(good[i], strlen(good[i]), NULL, 0), "'%s' is a room name", good[i]);
    const struct {
        const char *s;
        size_t len;
        const char *why;
    } bad[] = {
        {"", 0, "(this one has 0)"},
        {"abcdefghijklmnopqrstuvwxyz012345", 32, "(this one has 32)"},
        {"Lab", 3, "(character 1 is 'L')"},
        {"la b", 4, "(character 3 is byte 0x20)"},
        {"lab\0x", 5, "(character 4 is byte 0x00)"},
        {"caf\xc3\xa9", 5, "(character 4 is byte 0xc3)"},
        {"a/b", 3, "(character 2 is '/')"},
        {"a_b", 3, "(character 2 is '_')"},
        {"..", 2, "(character 1 is '.')"},
        {"a'b", 3, "(character 2 is byte 0x27)"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        char err[160] = "";
        CHECK(!room_name_ok(bad[i].s, bad[i].len, err, sizeof err), "'%.*s' is refused", (int)bad[i].len, bad[i].s);
        CHECK(strstr(err, ROOM_NAME_RULE) && strstr(err, bad[i].why), "the error names the rule and where: %s", err);
    }
    char tiny[8];
    CHECK(!room_name_ok("A", 1, tiny, sizeof tiny) && strlen(tiny) == 7, "an error fits its buffer");
}

int main(int argc, char **argv) {
    static const tl_test tests[] = {
        {"every_kind_has_a_row", test_every_kind_has_a_row},
        {"kinds_by_role", test_kinds_by_role},
        {"names", test_names},
        {"every_route_has_a_row", test_every_route_has_a_row},
        {"route_lookup", test_route_lookup},
        {"refusal_sentence", test_refusal_sentence},
        {"protocol_md_agrees", test_protocol_md_agrees},
        {"room_names", test_room_names},
    };
    return tl_run(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
