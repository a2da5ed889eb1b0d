/* room_doc.c - a room's kept settings as JSON (room_doc.h). */
#include "room_doc.h"

#include <cJSON.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int room_doc_write(const room_doc *d, char *out, size_t cap) {
    int n = snprintf(out, cap, "{\"public_role\": \"%s\", \"key_generation\": %u}\n", role_name(d->public_role),
                     d->key_gen);
    return n < 0 || (size_t)n >= cap ? -1 : n;
}

int room_doc_read(const char *text, size_t len, room_doc *d, char *err, size_t errlen) {
    if (len > ROOM_DOC_MAX) {
        snprintf(err, errlen, "room.json: more than %d bytes", ROOM_DOC_MAX);
        return -1;
    }
    cJSON *j = cJSON_ParseWithLength(text, len);
    if (!cJSON_IsObject(j)) {
        cJSON_Delete(j);
        snprintf(err, errlen, "room.json: not a JSON object");
        return -1;
    }
    room_doc out = {ROLE_PLAYER, 0};
    int seen = 0, rc = 0;
    for (const cJSON *f = j->child; f && !rc; f = f->next) {
        if (!strcmp(f->string, "public_role") && cJSON_IsString(f) && !(seen & 1)) {
            if (role_parse(f->valuestring, strlen(f->valuestring), &out.public_role) || out.public_role > ROLE_OWNER) {
                snprintf(err, errlen, "room.json: public_role is viewer, player, editor or owner");
                rc = -1;
            }
            seen |= 1;
        } else if (!strcmp(f->string, "key_generation") && cJSON_IsNumber(f) && !(seen & 2)) {
            double g = f->valuedouble;
            if (!(g >= 0 && g <= 4294967295.0) || floor(g) != g) {
                snprintf(err, errlen, "room.json: key_generation is a whole number from 0 to 4294967295");
                rc = -1;
            } else {
                out.key_gen = (unsigned)g;
            }
            seen |= 2;
        } else {
            snprintf(err, errlen, "room.json: unexpected field '%.40s' (or given twice, or of the wrong type)",
                     f->string ? f->string : "");
            rc = -1;
        }
    }
    cJSON_Delete(j);
    if (!rc && seen != 3) {
        snprintf(err, errlen, "room.json: public_role and key_generation are both needed");
        rc = -1;
    }
    if (!rc) *d = out;
    return rc;
}
