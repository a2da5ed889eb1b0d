/* bus_rooms.c - the rooms the bus thread follows (see bus_rooms.h). */
#include "bus_rooms.h"

#include <stdio.h>
#include <string.h>

static bus_room *in_table(bus *b, const char *name) {
    for (int i = 0; i < b->nroom; i++)
        if (!strcmp(b->room[i].name, name)) return &b->room[i];
    return NULL;
}

static void drop(bus *b, int i, bus_room_fn *on_drop) {
    if (on_drop) on_drop(b, &b->room[i]);
    room_unref(b->room[i].r);
    b->room[i] = b->room[--b->nroom];
}

bool bus_rooms_refresh(bus *b, bus_room_fn *on_add, bus_room_fn *on_drop) {
    int k = rooms_list(b->dir, b->listed, BUS_MAX_ROOMS);
    if (k > BUS_MAX_ROOMS) k = BUS_MAX_ROOMS;
    bool changed = false;
    for (int i = 0; i < b->nroom; i++) b->room[i].seen = false;
    for (int i = 0; i < k; i++) {
        bus_room *br = in_table(b, b->listed[i].name);
        if (br && room_listed(b->dir, br->r)) {
            br->seen = true;
            continue;
        }
        if (br) continue; /* deleted and made again under its name: dropped now, the new one taken next time */
        room *r = room_find(b->dir, b->listed[i].name);
        if (!r) continue; /* closed meanwhile */
        br = &b->room[b->nroom++];
        memset(br, 0, sizeof *br);
        br->r = r;
        memcpy(br->name, b->listed[i].name, sizeof br->name); /* (both ROOM_NAME_CAP, terminated) */
        br->seen = true;
        if (on_add) on_add(b, br);
        changed = true;
    }
    for (int i = b->nroom - 1; i >= 0; i--)
        if (!b->room[i].seen) {
            drop(b, i, on_drop);
            changed = true;
        }
    return changed;
}

void bus_rooms_clear(bus *b, bus_room_fn *on_drop) {
    while (b->nroom) drop(b, b->nroom - 1, on_drop);
}
