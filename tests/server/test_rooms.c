/* test_rooms.c - C unit tests of the directory of rooms (server/rooms/rooms.c):
 * opening, finding and counting references, the name rule and the other
 * refusals, closing and reaping, destroying with rooms still open, two rooms
 * with real sim threads each stepping its own world on one shared pool, and
 * lookups on two threads while a third opens and closes a room (the
 * ThreadSanitizer build, test_rooms_tsan, runs the same tests).
 *
 *   test_rooms_san [NAME...]
 * Prints "N passed, N failed, 0 skipped". */
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "config.h"
#include "hub.h"
#include "log.h"
#include "queue.h"
#include "rooms.h"
#include "testlib.h"

/* A generous bound on a wait, in 10 ms naps (turns a hang into a failure). */
#define WAIT_NAPS 6000

static void nap(void) {
    struct timespec ts = {0, 10 * 1000 * 1000};
    nanosleep(&ts, NULL);
}

static srv_config g_cfg;
static wire_static g_st;

/* A directory of relay-kind rooms (a hub and a queue each, no world). */
static rooms *plain_dir(int max_rooms) {
    config_defaults(&g_cfg);
    rooms_def def = rooms_default_def();
    def.cfg = &g_cfg;
    def.simulate = false;
    def.max_rooms = max_rooms;
    char err[256] = "";
    rooms *d = rooms_create(&def, err, sizeof err);
    CHECK(d != NULL, "rooms_create: %s", err);
    return d;
}

/* The refs a listed room has, from rooms_list; -1 when not listed. */
static int listed_refs(rooms *d, const char *name) {
    room_entry e[8];
    int n = rooms_list(d, e, 8);
    for (int i = 0; i < n && i < 8; i++)
        if (!strcmp(e[i].name, name)) return e[i].refs;
    return -1;
}

static void test_create_find_ref(void) {
    rooms *d = plain_dir(8);
    room *r = NULL;
    char err[256] = "";
    room_def def = room_default_def();
    CHECK(!strcmp(def.name, "default") && def.public_role == ROLE_PLAYER, "the default def: '%s', %s", def.name,
          role_name(def.public_role));
    CHECK(room_open(d, &def, &r, err, sizeof err) == ROOM_OK && r, "open default: %s", err);
    CHECK(!strcmp(room_name(r), "default") && room_public_role(r) == ROLE_PLAYER, "name and public role");
    CHECK(!strcmp(room_folder(r), ""), "no folder without --data-dir: '%s'", room_folder(r));
    CHECK(listed_refs(d, "default") == 2, "the directory's reference and the opener's: %d", listed_refs(d, "default"));
    room *f = room_find(d, "default");
    CHECK(f == r, "room_find gives the same room");
    CHECK(listed_refs(d, "default") == 3, "a lookup holds one more: %d", listed_refs(d, "default"));
    room_ref(f);
    CHECK(listed_refs(d, "default") == 4, "room_ref adds one: %d", listed_refs(d, "default"));
    room_unref(f);
    room_unref(f);
    room_unref(r);
    CHECK(listed_refs(d, "default") == 1, "the directory's alone: %d", listed_refs(d, "default"));
    CHECK(room_find(d, "lab") == NULL && room_find(d, "") == NULL && room_find(d, NULL) == NULL, "unknown names");
    /* the room's hub and queue are its own and work */
    r = room_find(d, "default");
    cmd c = {.kind = CMD_PAUSE, .client = 7, .rid = 3};
    CHECK(cmd_queue_push(room_queue(r), &c, false), "a command queued");
    cmd out[2];
    CHECK(cmd_queue_pop(room_queue(r), out, 2) == 1 && out[0].kind == CMD_PAUSE && out[0].rid == 3, "and popped");
    world_info wi = {.particles = 42};
    hub_set_info(room_hub(r), &wi);
    world_info back;
    hub_get_info(room_hub(r), &back);
    CHECK(back.particles == 42, "the hub keeps what is set: %d", back.particles);
    CHECK(room_set_public_role(r, ROLE_VIEWER) == 0 && room_public_role(r) == ROLE_VIEWER, "public role set");
    CHECK(room_set_public_role(r, ROLE_ADMIN) == -1 && room_public_role(r) == ROLE_VIEWER, "admin is not public");
    room_entry e[2];
    CHECK(rooms_list(d, e, 2) == 1 && e[0].public_role == ROLE_VIEWER && !e[0].simulated, "listed as a value");
    room_unref(r);
    /* a folder under --data-dir */
    rooms_destroy(d);
    d = plain_dir(8);
    snprintf(g_cfg.data_dir, sizeof g_cfg.data_dir, "/var/lib/fluid");
    def.name = "lab";
    CHECK(room_open(d, &def, &r, err, sizeof err) == ROOM_OK, "open lab: %s", err);
    CHECK(!strcmp(room_folder(r), "/var/lib/fluid/rooms/lab"), "folder: %s", room_folder(r));
    room_unref(r);
    rooms_destroy(d);
    REPORT("open, find, ref and unref: the counts 2, 3, 4, 1");
}

static void test_names_refused(void) {
    rooms *d = plain_dir(8);
    const char *bad[] = {"", "Lab", "a/b", "..", "abcdefghijklmnopqrstuvwxyz012345", "caf\xc3\xa9", "a b"};
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        room_def def = room_default_def();
        def.name = bad[i];
        char sentinel;
        room *r = (room *)&sentinel; /* set to NULL on refusal */
        char err[256] = "";
        CHECK(room_open(d, &def, &r, err, sizeof err) == ROOM_BAD_NAME && r == NULL, "'%s' refused", bad[i]);
        CHECK(strstr(err, ROOM_NAME_RULE) != NULL, "the error names the rule: %s", err);
        CHECK(room_find(d, bad[i]) == NULL, "'%s' is not found", bad[i]);
    }
    room_def def = room_default_def();
    def.name = NULL;
    room *r;
    char err[256] = "";
    CHECK(room_open(d, &def, &r, err, sizeof err) == ROOM_BAD_NAME && strstr(err, ROOM_NAME_RULE), "no name: %s", err);
    def = room_default_def();
    def.public_role = ROLE_ADMIN;
    CHECK(room_open(d, &def, &r, err, sizeof err) == ROOM_BAD_NAME && strstr(err, "public role"), "admin: %s", err);
    def.public_role = (role)-1;
    CHECK(room_open(d, &def, &r, NULL, 0) == ROOM_BAD_NAME, "a role outside the enum, without an error buffer");
    CHECK(rooms_list(d, NULL, 0) == 0, "nothing listed after refusals");
    rooms_destroy(d);
    REPORT("%zu bad names, no name and 2 bad roles refused, each naming the rule", sizeof bad / sizeof *bad);
}

static void test_exists_and_full(void) {
    rooms *d = plain_dir(3);
    const char *names[] = {"a", "b-2", "c3"};
    room *r[3];
    char err[256] = "";
    for (int i = 0; i < 3; i++) {
        room_def def = room_default_def();
        def.name = names[i];
        CHECK(room_open(d, &def, &r[i], err, sizeof err) == ROOM_OK, "open %s: %s", names[i], err);
    }
    room_def def = room_default_def();
    def.name = "a";
    room *x;
    CHECK(room_open(d, &def, &x, err, sizeof err) == ROOM_EXISTS && x == NULL && strstr(err, "'a' exists"), "%s", err);
    def.name = "d";
    CHECK(room_open(d, &def, &x, err, sizeof err) == ROOM_FULL && strstr(err, "(3)"), "%s", err);
    /* a closed room still held counts against the bound until it is reaped */
    CHECK(room_close(d, "b-2") == ROOM_OK, "closed");
    CHECK(room_close(d, "b-2") == ROOM_NOT_FOUND, "closed once");
    CHECK(room_open(d, &def, &x, err, sizeof err) == ROOM_FULL, "full while b-2 waits for the reaper: %s", err);
    CHECK(rooms_reap(d) == 0, "b-2 is held: not reaped");
    room_unref(r[1]);
    CHECK(rooms_reap(d) == 1, "b-2 reaped once free");
    CHECK(room_open(d, &def, &x, err, sizeof err) == ROOM_OK, "room for d now: %s", err);
    room_entry e[4];
    int n = rooms_list(d, e, 4);
    CHECK(n == 3 && !strcmp(e[0].name, "a") && !strcmp(e[1].name, "c3") && !strcmp(e[2].name, "d"),
          "listed in the order opened: %d", n);
    CHECK(rooms_list(d, e, 1) == 3, "a short list still counts them all");
    room_unref(r[0]), room_unref(r[2]), room_unref(x);
    rooms_destroy(d);
    REPORT("a taken name and a full directory refused; a reaped room frees its place");
}

static void test_close_and_reap(void) {
    rooms *d = plain_dir(8);
    room_def def = room_default_def();
    def.name = "lab";
    room *r, *r2;
    char err[256] = "";
    CHECK(room_open(d, &def, &r, err, sizeof err) == ROOM_OK, "%s", err);
    room *held = room_find(d, "lab");
    room_unref(r);
    CHECK(room_close(d, "lab") == ROOM_OK, "closed");
    CHECK(room_find(d, "lab") == NULL, "a closed room is not found");
    CHECK(rooms_list(d, NULL, 0) == 0, "nor listed");
    /* the name is free at once; the holder's room is still whole */
    CHECK(room_open(d, &def, &r2, err, sizeof err) == ROOM_OK && r2 != held, "a new lab: %s", err);
    cmd c = {.kind = CMD_PAUSE, .client = 1};
    CHECK(cmd_queue_push(room_queue(held), &c, false), "the closed room's queue still works for its holder");
    CHECK(!strcmp(room_name(held), "lab"), "and its name");
    CHECK(rooms_reap(d) == 0, "held: not reaped");
    room_unref(held);
    CHECK(rooms_reap(d) == 1, "reaped");
    CHECK(rooms_reap(d) == 0, "once");
    room *f = room_find(d, "lab");
    CHECK(f == r2, "the new lab is found");
    room_unref(f), room_unref(r2);
    rooms_destroy(d);
    REPORT("close: gone from lookups at once, freed when the last holder lets go");
}

/* Rooms listed, closed-and-held and closed-and-free at destroy: ASan's leak
 * check says whether everything was freed. */
static void test_destroy_with_rooms_open(void) {
    rooms *d = plain_dir(16);
    char err[256] = "";
    room *kept = NULL;
    for (int i = 0; i < 10; i++) {
        char name[16];
        snprintf(name, sizeof name, "r%d", i);
        room_def def = room_default_def();
        def.name = name;
        room *r;
        CHECK(room_open(d, &def, &r, err, sizeof err) == ROOM_OK, "%s", err);
        if (i == 4)
            kept = r;
        else
            room_unref(r);
        if (i % 3 == 0) CHECK(room_close(d, name) == ROOM_OK, "close %s", name);
    }
    CHECK(rooms_list(d, NULL, 0) == 6, "6 listed, 4 closed");
    (void)kept; /* still held: destroy frees it (and says so in the log) */
    rooms_stop(d);
    rooms_destroy(d);
    rooms_destroy(NULL);
    REPORT("destroyed with 6 rooms listed (one held) and 4 closed");
}

/* The server's hello constants, as main.c fills them. */
static void fill_static(void) {
    memset(&g_st, 0, sizeof g_st);
    g_st.tick_hz = g_cfg.tick_hz;
    g_st.frame_hz = g_cfg.frame_hz;
    g_st.max_msg = WIRE_MAX_MSG;
}

/* A directory whose rooms step real worlds of 1000 particles, sharing a
 * pool of 2 threads. */
static rooms *sim_dir(void) {
    config_defaults(&g_cfg);
    g_cfg.particles = 1000;
    g_cfg.threads = 2;
    g_cfg.quiet = true;
    g_cfg.step_budget = 0; /* no admission: rooms.test.mjs measures it on a running server */
    fill_static();
    rooms_def def = rooms_default_def();
    def.cfg = &g_cfg;
    def.st = &g_st;
    def.max_rooms = 4;
    def.threads = g_cfg.threads;
    char err[256] = "";
    rooms *d = rooms_create(&def, err, sizeof err);
    CHECK(d != NULL, "rooms_create: %s", err);
    return d;
}

static uint64_t tick_of(room *r) {
    sim_stats s;
    hub_get_stats(room_hub(r), &s);
    return s.tick;
}

static void test_sim_rooms(void) {
    rooms *d = sim_dir();
    room *home, *lab;
    char err[256] = "";
    room_def def = room_default_def();
    CHECK(room_open(d, &def, &home, err, sizeof err) == ROOM_OK, "%s", err);
    def.name = "lab";
    CHECK(room_open(d, &def, &lab, err, sizeof err) == ROOM_OK, "%s", err);
    room_entry e[4];
    CHECK(rooms_list(d, e, 4) == 2 && e[0].simulated && e[1].simulated, "both have a sim thread");
    world_info w0;
    hub_get_info(room_hub(home), &w0);
    CHECK(room_start(home) == 0 && room_start(lab) == 0, "started");
    /* a command in lab's queue changes lab's world only */
    const char *other = fs_scene_get(fs_scene_count() - 1)->name;
    cmd c = {.kind = CMD_LOAD_SCENE, .client = 5, .rid = 1, .role = ROLE_ADMIN};
    snprintf(c.u.scene.name, sizeof c.u.scene.name, "%s", other);
    c.u.scene.particles = 800;
    c.u.scene.solver = -1;
    CHECK(cmd_queue_push(room_queue(lab), &c, false), "queued in lab");
    world_info wl, wh;
    int naps = 0;
    for (; naps < WAIT_NAPS; naps++, nap()) {
        hub_get_info(room_hub(lab), &wl);
        if (!strcmp(wl.scene, other) && tick_of(home) > 5 && tick_of(lab) > 5) break;
    }
    hub_get_info(room_hub(home), &wh);
    REPORT("default: '%s' %d particles, tick %llu; lab: '%s' %d particles, tick %llu", wh.scene, wh.particles,
           (unsigned long long)tick_of(home), wl.scene, wl.particles, (unsigned long long)tick_of(lab));
    CHECK(naps < WAIT_NAPS, "lab loaded '%s' and both rooms stepped", other);
    CHECK(!strcmp(wh.scene, g_cfg.scene[0] ? g_cfg.scene : fs_scene_get(0)->name), "default kept its scene: %s",
          wh.scene);
    CHECK(wh.particles == w0.particles && w0.particles > 0, "default kept its particles: %d, %d", w0.particles,
          wh.particles);
    CHECK(strcmp(wl.scene, wh.scene) != 0, "the two worlds differ");
    /* closing a running room: it steps on while held, and is joined when reaped */
    room_unref(lab);
    CHECK(room_close(d, "lab") == ROOM_OK, "closed");
    CHECK(rooms_reap(d) == 1, "lab joined and freed");
    CHECK(tick_of(home) > 0, "default still steps");
    /* only the default room may record into the server's --record-dir */
    rooms_stop(d);
    room_unref(home);
    rooms_destroy(d);
    d = sim_dir();
    snprintf(g_cfg.record_dir, sizeof g_cfg.record_dir, "/nonexistent/fluid-rooms-test");
    def.name = "lab";
    CHECK(room_open(d, &def, &lab, err, sizeof err) == ROOM_FAILED && strstr(err, "only the default room may record"),
          "%s", err);
    rooms_destroy(d);
}

/* Lookups on two threads while the main thread opens and closes "lab". */
typedef struct looker {
    rooms *d;
    atomic_bool *stop;
    atomic_long found_default, found_lab, missed_lab, wrong;
} looker;

static void *look(void *arg) {
    looker *l = arg;
    room_entry e[4];
    while (!atomic_load(l->stop)) {
        room *r = room_find(l->d, ROOMS_DEFAULT);
        if (r && !strcmp(room_name(r), ROOMS_DEFAULT) && room_public_role(r) == ROLE_PLAYER)
            atomic_fetch_add(&l->found_default, 1);
        else
            atomic_fetch_add(&l->wrong, 1);
        room_unref(r);
        room *lab = room_find(l->d, "lab");
        if (lab) {
            sim_stats s;
            hub_get_stats(room_hub(lab), &s);
            atomic_fetch_add(strcmp(room_name(lab), "lab") ? &l->wrong : &l->found_lab, 1);
            room_unref(lab);
        } else {
            atomic_fetch_add(&l->missed_lab, 1);
        }
        int n = rooms_list(l->d, e, 4);
        if (n < 1 || n > 2 || strcmp(e[0].name, ROOMS_DEFAULT)) atomic_fetch_add(&l->wrong, 1);
        sched_yield();
    }
    return NULL;
}

/* Waits until some looker's counter passes its value at entry. */
static bool seen(looker *l, int nl, size_t field) {
    long before = 0;
    for (int i = 0; i < nl; i++) before += atomic_load((atomic_long *)((char *)&l[i] + field));
    for (int naps = 0; naps < WAIT_NAPS * 100; naps++) {
        long now = 0;
        for (int i = 0; i < nl; i++) now += atomic_load((atomic_long *)((char *)&l[i] + field));
        if (now > before) return true;
        sched_yield();
    }
    return false;
}

static void cycle_rooms(rooms *d, int cycles, bool start) {
    atomic_bool stop;
    atomic_init(&stop, false);
    looker l[2];
    pthread_t t[2];
    for (int i = 0; i < 2; i++) {
        memset(&l[i], 0, sizeof l[i]);
        l[i].d = d, l[i].stop = &stop;
        CHECK(pthread_create(&t[i], NULL, look, &l[i]) == 0, "thread");
    }
    int reaped = 0, both = 0;
    char err[256] = "";
    for (int k = 0; k < cycles; k++) {
        room_def def = room_default_def();
        def.name = "lab";
        room *r;
        CHECK(room_open(d, &def, &r, err, sizeof err) == ROOM_OK, "cycle %d: %s", k, err);
        if (start) CHECK(room_start(r) == 0, "started");
        room_unref(r);
        bool found = seen(l, 2, offsetof(looker, found_lab));
        CHECK(room_close(d, "lab") == ROOM_OK, "cycle %d: closed", k);
        bool missed = seen(l, 2, offsetof(looker, missed_lab));
        both += found && missed;
        reaped += rooms_reap(d);
    }
    atomic_store(&stop, true);
    for (int i = 0; i < 2; i++) pthread_join(t[i], NULL);
    reaped += rooms_reap(d);
    long fd = 0, fl = 0, ml = 0, wrong = 0;
    for (int i = 0; i < 2; i++)
        fd += atomic_load(&l[i].found_default), fl += atomic_load(&l[i].found_lab), ml += atomic_load(&l[i].missed_lab),
            wrong += atomic_load(&l[i].wrong);
    REPORT("%d cycles%s: lookups found default %ld, found lab %ld, missed lab %ld, wrong %ld; %d reaped", cycles,
           start ? " (stepping worlds)" : "", fd, fl, ml, wrong, reaped);
    CHECK(wrong == 0, "every lookup found the room it named, default always: %ld wrong", wrong);
    CHECK(both == cycles, "the lookers saw lab open and closed in every cycle: %d of %d", both, cycles);
    CHECK(reaped == cycles, "every closed lab freed: %d of %d", reaped, cycles);
    CHECK(rooms_list(d, NULL, 0) == 1, "default alone listed");
}

static void test_lookups_while_opening(void) {
    rooms *d = plain_dir(4);
    room *home;
    room_def def = room_default_def();
    char err[256] = "";
    CHECK(room_open(d, &def, &home, err, sizeof err) == ROOM_OK, "%s", err);
    cycle_rooms(d, 200, false);
    room_unref(home);
    rooms_destroy(d);
    d = sim_dir();
    CHECK(room_open(d, &def, &home, err, sizeof err) == ROOM_OK && room_start(home) == 0, "%s", err);
    cycle_rooms(d, 3, true);
    rooms_stop(d);
    room_unref(home);
    rooms_destroy(d);
}

int main(int argc, char **argv) {
    log_set_level(LOG_WARN); /* the sim threads' start-up lines aside */
    static const tl_test tests[] = {
        {"create_find_ref", test_create_find_ref},
        {"names_refused", test_names_refused},
        {"exists_and_full", test_exists_and_full},
        {"close_and_reap", test_close_and_reap},
        {"destroy_with_rooms_open", test_destroy_with_rooms_open},
        {"sim_rooms", test_sim_rooms},
        {"lookups_while_opening", test_lookups_while_opening},
    };
    return tl_run(tests, (int)(sizeof tests / sizeof tests[0]), argc, argv);
}
