/* fuzz_bus.c - libFuzzer harness for the messages a node reads from the
 * message bus (server/wire/bus_codec.c): the first input byte picks the
 * decoder (frameset, wants, reply, forward, info, stats, a subject's relay
 * id, the rooms' list, a room's subject, a room's obstacles, an obstacle's
 * mesh, a relay's mesh wants, a REST write over the bus or its answer),
 * the rest is the message; a
 * forwarded client message is then decoded as the sim node does
 * (wire_decode_command).  Each must refuse or decode, never read out of
 * bounds, never leak what it allocated; what decodes holds room names of the
 * rule, a credential within its bound, known roles.
 *
 * Built and run by tests/fuzz/fuzz.mk; seeds: tests/fuzz/corpus/fuzz_bus. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "bus_codec.h"
#include "bus_http.h"
#include "command.h"
#include "fuzz_check.h"
#include "obstacle_mesh.h"
#include "room_name.h"
#include "rest_route.h"
#include "wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    const uint8_t *p = data + 1;
    size_t n = size - 1;
    char err[200];
    switch (data[0] % 14) {
    case 0: {
        frameset fs;
        if (!bus_decode_frameset(p, n, &fs, err, sizeof err)) {
            for (int i = 0; i < fs.count; i++) FUZZ_REQUIRE(fs.coding[i].tier >= 0 && fs.coding[i].tier < FRAME_TIERS);
            frameset_unref(&fs);
        }
        break;
    }
    case 1: {
        uint32_t relay;
        static bus_room_wants w[BUS_MAX_ROOMS];
        int k = -1;
        if (!bus_decode_wants(p, n, &relay, w, BUS_MAX_ROOMS, &k, err, sizeof err)) {
            FUZZ_REQUIRE(k >= 0 && k <= BUS_MAX_ROOMS && relay >= 1 && relay <= CMD_RELAY_MAX);
            for (int i = 0; i < k; i++) {
                FUZZ_REQUIRE(room_name_ok(w[i].room, strlen(w[i].room), NULL, 0));
                for (int t = 1; t < FRAME_TIERS; t++) FUZZ_REQUIRE(w[i].w.coarse[t - 1].clients <= w[i].w.clients);
            }
        }
        break;
    }
    case 2: {
        cmd_reply r;
        char room[ROOM_NAME_CAP];
        if (!bus_decode_reply(p, n, &r, room, err, sizeof err)) {
            FUZZ_REQUIRE(room_name_ok(room, strlen(room), NULL, 0));
            /* a decoded reply's code is in the table, and an ok one has none */
            FUZZ_REQUIRE(r.code < RC_COUNT && (!r.ok || r.code == RC_OK));
            FUZZ_REQUIRE(reply_code_http(cmd_reply_code(&r)) >= (r.ok ? 200 : 400));
        }
        break;
    }
    case 3: {
        bus_forward f;
        cmd c;
        if (!bus_decode_forward(p, n, &f, err, sizeof err)) {
            FUZZ_REQUIRE(room_name_ok(f.room, strlen(f.room), NULL, 0) && f.cred_len <= BUS_MAX_CRED &&
                         (!f.cred_len || !memchr(f.cred, 0, f.cred_len)) && cmd_client_relay(f.client) == f.relay);
            int kind = f.kind;
            const uint8_t *b = f.bytes;
            size_t len = f.len;
            if (kind == BUS_FWD_WS) wire_decode_command(b, len, &c, err, sizeof err);
            if (kind == BUS_FWD_REST) {
                int method;
                char path[256];
                const char *body;
                size_t bl;
                if (!bus_unpack_rest(b, len, &method, path, sizeof path, &body, &bl, err, sizeof err)) {
                    rest_request q = {.method = method, .path = path, .body = bl ? body : NULL, .body_len = bl};
                    rest_action a;
                    rest_translate(&q, &a);
                }
            }
        }
        break;
    }
    case 4: {
        world_info wi;
        bus_decode_info(p, n, &wi, err, sizeof err);
        break;
    }
    case 5: {
        sim_stats st;
        bus_decode_stats(p, n, &st, err, sizeof err);
        break;
    }
    case 6: {
        /* a subject, as the broker hands it over: terminated here */
        char subj[256];
        size_t k = n < sizeof subj - 1 ? n : sizeof subj - 1;
        memcpy(subj, p, k);
        subj[k] = 0;
        uint32_t relay;
        if (!bus_subject_relay(subj, "fluid.w.cmd", &relay, err, sizeof err) && (relay < 1 || relay > CMD_RELAY_MAX))
            abort();
        break;
    }
    case 7: {
        static bus_room_entry e[BUS_MAX_ROOMS];
        int k = -1;
        if (!bus_decode_rooms(p, n, e, BUS_MAX_ROOMS, &k, err, sizeof err)) {
            FUZZ_REQUIRE(k >= 0 && k <= BUS_MAX_ROOMS);
            for (int i = 0; i < k; i++)
                FUZZ_REQUIRE(room_name_ok(e[i].name, strlen(e[i].name), NULL, 0) && e[i].public_role < ROLE_COUNT);
        }
        break;
    }
    case 8: {
        char subj[256], room[ROOM_NAME_CAP];
        size_t k = n < sizeof subj - 1 ? n : sizeof subj - 1;
        memcpy(subj, p, k);
        subj[k] = 0;
        if (!bus_subject_room(subj, "fluid.w.r", "frames", room, err, sizeof err))
            FUZZ_REQUIRE(room_name_ok(room, strlen(room), NULL, 0));
        break;
    }
    case 9: {
        bus_obstacles o;
        if (!bus_decode_obstacles(p, n, &o, err, sizeof err)) {
            FUZZ_REQUIRE(o.count >= 0 && o.count <= FS_MAX_OBSTACLES && o.list_len <= BUS_MAX_OBST_LIST &&
                         o.list >= p && o.list + o.list_len <= p + n);
            for (int i = 0; i < o.count; i++) FUZZ_REQUIRE(o.bytes[i] >= OBSTACLE_MESH_HEAD);
        }
        break;
    }
    case 10: {
        uint32_t id;
        uint64_t hash, again;
        const uint8_t *mesh;
        size_t len;
        if (!bus_decode_obstacle_mesh(p, n, &id, &hash, &mesh, &len, err, sizeof err))
            FUZZ_REQUIRE(mesh >= p && mesh + len <= p + n && !obstacle_mesh_check(mesh, len, &again) && again == hash);
        break;
    }
    case 11: {
        uint32_t relay, ids[FS_MAX_OBSTACLES];
        char room[ROOM_NAME_CAP];
        int k = -1;
        if (!bus_decode_mesh_wants(p, n, &relay, room, ids, &k, err, sizeof err))
            FUZZ_REQUIRE(k >= 0 && k <= FS_MAX_OBSTACLES && relay >= 1 && relay <= CMD_RELAY_MAX &&
                         room_name_ok(room, strlen(room), NULL, 0));
        break;
    }
    case 12: {
        bus_http_req q;
        if (!bus_decode_http_req(p, n, &q, err, sizeof err)) {
            /* a read or a write under /rooms, of a room of the rule, its parts within their bounds and inside the
             * message; a read has a room and no body */
            FUZZ_REQUIRE(q.method == HM_GET || q.method == HM_POST || q.method == HM_PATCH || q.method == HM_DELETE);
            FUZZ_REQUIRE(q.method != HM_GET || (q.room[0] && !q.body_len));
            FUZZ_REQUIRE(!strncmp(q.path, "/rooms", 6) && strlen(q.path) < BUS_HTTP_PATH);
            FUZZ_REQUIRE(q.room[0] ? room_name_ok(q.room, strlen(q.room), NULL, 0) : q.method == HM_POST);
            FUZZ_REQUIRE(q.cred_len <= BUS_HTTP_CRED && (!q.cred_len || (q.cred >= p && q.cred + q.cred_len <= p + n &&
                                                                         !memchr(q.cred, 0, q.cred_len))));
            FUZZ_REQUIRE(
                q.body_len <= BUS_HTTP_BODY &&
                (!q.body_len || ((const uint8_t *)q.body >= p && (const uint8_t *)q.body + q.body_len <= p + n)));
        }
        break;
    }
    case 13: {
        bus_http_answer a;
        if (!bus_decode_http_answer(p, n, &a, err, sizeof err))
            FUZZ_REQUIRE(a.status >= 200 && a.status <= 599 && a.retry_after >= 0 &&
                         a.retry_after <= BUS_HTTP_RETRY_MAX && a.body_len > 0 && a.body_len <= BUS_HTTP_ANSWER &&
                         (const uint8_t *)a.body >= p && (const uint8_t *)a.body + a.body_len <= p + n);
        break;
    }
    }
    return 0;
}
