// obstacles.js - the page's mesh obstacles: the room's obstacles drawn for
// every viewer (the `obstacles` message, each mesh fetched once by hash,
// obstacle_mesh.js), and a mesh file dropped on the canvas or picked in the
// panel uploaded (POST /api/meshes) and placed fitted into the box (POST
// /api/obstacles {mesh, fit: true}); refusals are shown as the server words
// them.  Uploading needs the player role (roles.js locks the controls).
import { apiPath } from './room.js';
import { ObstacleMeshes } from './obstacle_mesh.js';
import { roleLocked } from './ui/roles.js';

// The Content-Type of a mesh file by its name's extension, or null.
export function meshType(name) {
  const ext = /\.([a-z0-9]+)$/i.exec(name || '')?.[1]?.toLowerCase();
  return { stl: 'model/stl', obj: 'model/obj', glb: 'model/gltf-binary' }[ext] || null;
}

// A refusal's words: the JSON body's `error`, else the status line.
async function why(r) {
  const text = await r.text().catch(() => '');
  try { return JSON.parse(text).error || `${r.status} ${r.statusText}`; } catch { return `${r.status} ${r.statusText}`; }
}

export class Obstacles {
  // page: the page's state (renderer); cred: the page's token or invite, or
  // null; toast(text, err); el: {canvas, file, add, clear, state} elements.
  constructor(page, cred, toast, el) {
    this.page = page;
    this.auth = cred ? { Authorization: `Bearer ${cred}` } : {};
    this.toast = toast;
    this.el = el;
    this.uploads = 0;      // files uploaded and placed
    this.lastError = null; // the last refusal shown
    this.meshes = new ObstacleMeshes((id) => this.fetchMesh(id), {
      onChange: () => this.changed(),
      onError: (e) => this.fail(`obstacle mesh: ${e.message}`),
    });
    el.add.addEventListener('click', () => el.file.click());
    el.file.addEventListener('change', () => {
      const f = el.file.files?.[0];
      el.file.value = '';
      if (f) this.addFile(f);
    });
    el.clear.addEventListener('click', () => this.clear());
    el.canvas.addEventListener('dragover', (e) => {
      if ([...(e.dataTransfer?.types || [])].includes('Files')) { e.preventDefault(); e.dataTransfer.dropEffect = 'copy'; }
    });
    el.canvas.addEventListener('drop', (e) => {
      const f = e.dataTransfer?.files?.[0];
      if (!f) return;
      e.preventDefault();
      if (roleLocked(el.add)) { this.fail(`adding a mesh ${el.add.title}`); return; }
      this.addFile(f);
    });
  }

  // A relay answers 503 while it fetches the mesh from the sim node: asked
  // again, every half second, for up to 30 s.
  async fetchMesh(id) {
    for (let tries = 0; ; tries++) {
      const r = await fetch(apiPath(`/obstacles/${id}/mesh`), { headers: this.auth });
      if (r.ok) return r.arrayBuffer();
      if (r.status !== 503 || tries >= 60) throw new Error(await why(r));
      await r.arrayBuffer().catch(() => null);
      await new Promise((res) => setTimeout(res, 500));
    }
  }

  // Every hello: the list that follows it is taken whatever its version.
  reset() { this.meshes.reset(); }

  // An `obstacles` message; told to the user when someone else changed them.
  onMessage(m, myId, who) {
    const before = this.meshes.list.length, known = this.meshes.version >= 0;
    if (!this.meshes.apply(m)) return;
    const n = m.obstacles.length;
    if (known && m.by !== myId && n !== before) this.toast(`${who(m.by)} ${n > before ? 'added' : 'removed'} an obstacle (${n} now)`);
  }

  changed() {
    const d = this.meshes.drawable();
    this.page.renderer.setObstacles(d);
    const n = this.meshes.list.length, tri = d.reduce((a, o) => a + o.triangles, 0);
    this.el.state.textContent = n ? `${n} obstacle${n > 1 ? 's' : ''}, ${tri.toLocaleString()} triangles${d.length < n ? ' (loading)' : ''}` : '';
  }

  fail(text) {
    this.lastError = text;
    this.toast(text, true);
  }

  // Uploads file and places it fitted into the box.
  async addFile(file) {
    const type = meshType(file.name);
    if (!type) { this.fail(`${file.name}: not a mesh this page sends (.stl, .obj or .glb)`); return; }
    try {
      const up = await fetch(apiPath('/meshes'), { method: 'POST', headers: { ...this.auth, 'Content-Type': type }, body: file });
      if (!up.ok) { this.fail(`${file.name}: ${await why(up)}`); return; }
      const mesh = await up.json();
      const at = await fetch(apiPath('/obstacles'), {
        method: 'POST', headers: { ...this.auth, 'Content-Type': 'application/json' }, body: JSON.stringify({ mesh: mesh.id, fit: true }),
      });
      if (!at.ok) { this.fail(`${file.name}: ${await why(at)}`); return; }
      this.uploads++;
      this.toast(`${file.name}: ${mesh.triangles.toLocaleString()} triangles${mesh.closed ? '' : ' (an open shell)'}, placed as an obstacle`);
    } catch (e) { this.fail(`${file.name}: ${e.message}`); }
  }

  // Removes every obstacle.
  async clear() {
    for (const o of this.meshes.list) {
      const r = await fetch(apiPath(`/obstacles/${o.id}`), { method: 'DELETE', headers: this.auth }).catch((e) => ({ ok: false, e }));
      if (!r.ok && r.status !== 404) { this.fail(`obstacle ${o.id}: ${r.e ? r.e.message : await why(r)}`); return; }
    }
  }
}
