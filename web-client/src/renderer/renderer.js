// renderer.js - draws the world with WebGL2: the box, the bodies and the
// mesh obstacles, the particles as instanced sphere impostors (or, in
// surface mode, a screen-space fluid surface built from them) and the users'
// cursors.
import { program, texture, framebuffer } from './gl.js';
import * as S from './shaders.js';
import { remapByIds } from '../decode.js';
import { vec3 } from '../math.js';
import { sphereMesh, cubeMesh } from './meshes.js';
import { modelMatrix } from '../bodies.js';
import { tempLut, TEMP_RANGE } from '../temperature.js';

const MATERIAL_COLOURS = {
  water: [0.22, 0.52, 0.92], goo: [0.40, 0.78, 0.30], jelly: [0.90, 0.36, 0.62],
  clay: [0.80, 0.46, 0.30], honey: [0.95, 0.66, 0.16], chocolate: [0.42, 0.24, 0.13],
  oil: [0.86, 0.80, 0.28],
};
export function materialColour(name, index) {
  if (MATERIAL_COLOURS[name]) return MATERIAL_COLOURS[name];
  const h = (index * 0.618034) % 1;            // golden-ratio hues for unknown names
  const f = (k) => { const x = (k + h * 6) % 6; return 0.75 - 0.5 * Math.max(0, Math.min(1, Math.min(x - 1, 4 - x))); };
  return [f(5), f(3), f(1)];
}
export function hexColour(s) {
  const m = /^#?([0-9a-f]{6})$/i.exec(s || '');
  if (!m) return [1, 1, 1];
  const v = parseInt(m[1], 16);
  return [(v >> 16 & 255) / 255, (v >> 8 & 255) / 255, (v & 255) / 255];
}

const MAT_W = 1024;
const IDENTITY = new Float32Array([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1]);

const CUBE_TRIS = (() => {
  // 6 faces, outward winding (counter-clockwise seen from outside).
  const f = [[0, 2, 3, 1], [4, 5, 7, 6], [0, 1, 5, 4], [2, 6, 7, 3], [0, 4, 6, 2], [1, 3, 7, 5]];
  const v = (i) => [i & 1, (i >> 1) & 1, (i >> 2) & 1];
  const out = [];
  for (const [a, b, c, d] of f) for (const i of [a, b, c, a, c, d]) out.push(...v(i));
  return new Float32Array(out);
})();
const CUBE_LINES = (() => {
  const out = [];
  const v = (i) => [i & 1, (i >> 1) & 1, (i >> 2) & 1];
  for (let i = 0; i < 8; i++) for (const bit of [1, 2, 4]) if (!(i & bit)) out.push(...v(i), ...v(i | bit));
  return new Float32Array(out);
})();

export class Renderer {
  constructor(canvas) {
    const gl = canvas.getContext('webgl2', { antialias: true, alpha: false, depth: true, powerPreference: 'high-performance' });
    if (!gl) throw new Error('This browser cannot create a WebGL2 context.');
    this.gl = gl;
    this.canvas = canvas;
    this.floatTargets = !!gl.getExtension('EXT_color_buffer_float');
    // Particles are point sprites: SwiftShader (software WebGL) runs each
    // instance of an instanced draw separately (30 us each: 600 ms for 20k
    // quads), while points cost one vertex each.  Sprites are capped at this size.
    this.maxPointSize = gl.getParameter(gl.ALIASED_POINT_SIZE_RANGE)[1];
    this.viewH = canvas.height;
    this.p = {
      particle: program(gl, S.PARTICLE_VS, S.PARTICLE_FS, 'particles'),
      ssfDepth: program(gl, S.PARTICLE_VS, S.SSF_DEPTH_FS, 'ssf-depth'),
      ssfThick: program(gl, S.PARTICLE_VS, S.SSF_THICK_FS, 'ssf-thickness'),
      blur: program(gl, S.FULLSCREEN_VS, S.SSF_BLUR_FS, 'ssf-blur'),
      gauss: program(gl, S.FULLSCREEN_VS, S.GAUSS_BLUR_FS, 'gauss'),
      shade: program(gl, S.FULLSCREEN_VS, S.SSF_SHADE_FS, 'ssf-shade'),
      box: program(gl, S.BOX_VS, S.BOX_FS, 'box'),
      line: program(gl, S.LINE_VS, S.LINE_FS, 'lines'),
      marker: program(gl, S.MARKER_VS, S.MARKER_FS, 'marker'),
      body: program(gl, S.BODY_VS, S.BODY_FS, 'bodies'),
    };
    const mesh = (m) => this._vao(m.data, 24, m.index);
    this.meshes = { sphere: mesh(sphereMesh()), box: mesh(cubeMesh()) };
    // Particles: two position buffers (uint16 triples as sent), one of materials.
    this.cap = 0;
    this.posBuf = [gl.createBuffer(), gl.createBuffer()];
    this.slotKey = ['', ''];
    // Materials go in an R8UI texture: a 1-byte-stride integer attribute makes
    // ANGLE convert the whole buffer on every draw (seen at 800 ms per draw in
    // SwiftShader); texture rows take the frame's bytes as they are.
    this.matTex = gl.createTexture();
    this.matOrder = -1;
    // Temperatures: one R8UI texture per position slot (the same frame's
    // bytes, in the same id order), interpolated like the positions, and a
    // 256-texel colour ramp indexed by the byte (tempLut, linear filtering).
    this.tempTex = [gl.createTexture(), gl.createTexture()];
    this.hasTemp = [false, false];
    this.lutTex = gl.createTexture();
    this.lutLo = null;
    this.lutBytes = new Uint8Array(1024);
    this._setLut(TEMP_RANGE[0]);
    this.scratch = new Uint16Array(0);
    this.scratch8 = new Uint8Array(0);
    this.vao = gl.createVertexArray();
    this.drawN = 0;
    this.prevSlot = 0; this.curSlot = 1;
    this.boxVao = this._vao(CUBE_TRIS, 12);
    this.lineVao = this._vao(CUBE_LINES, 12);
    this.emptyVao = gl.createVertexArray();
    this.bounds = [0, 0, 0, 1, 1, 1];
    this.radius = 0.04;
    this.spacing = 0.08;
    this.matColours = new Float32Array(24).fill(0.7);
    this.ssf = null;
    this.obstacleGpu = new Map();   // hash -> {vao, count}
    this.obstacleList = [];         // what _drawObstacles draws
    this.obstaclesDrawn = 0;        // obstacles drawn by the last frame
    this.finishPixel = new Uint8Array(4);
  }

  // A vertex array of float xyz vertices (stride 12) or xyz and normal
  // (stride 24, attributes 0 and 1), drawn by index when `index` is given.
  _vao(data, stride, index = null) {
    const gl = this.gl;
    const vao = gl.createVertexArray();
    gl.bindVertexArray(vao);
    const buf = gl.createBuffer();
    gl.bindBuffer(gl.ARRAY_BUFFER, buf);
    gl.bufferData(gl.ARRAY_BUFFER, data, gl.STATIC_DRAW);
    for (let a = 0; 12 * a < stride; a++) {
      gl.enableVertexAttribArray(a);
      gl.vertexAttribPointer(a, 3, gl.FLOAT, false, stride, 12 * a);
    }
    if (index) {
      gl.bindBuffer(gl.ELEMENT_ARRAY_BUFFER, gl.createBuffer());
      gl.bufferData(gl.ELEMENT_ARRAY_BUFFER, index, gl.STATIC_DRAW);
    }
    gl.bindVertexArray(null);
    return { vao, buf, count: index ? index.length : data.length / (stride / 4) };
  }

  // bodies: [{shape, size, pos, rot, static, grabbed_by}] (interpolated);
  // holderColour(id) -> [r, g, b] for a body someone holds.
  _drawBodies(cam, bodies, holderColour) {
    if (!bodies?.length) return;
    const gl = this.gl, pr = this.p.body, u = pr.u;
    gl.useProgram(pr.prog);
    gl.uniformMatrix4fv(u.uViewProj, false, cam.viewProj);
    gl.uniform3fv(u.uEye, cam.position);
    gl.uniform3fv(u.uLightW, vec3.norm([-0.4, 0.85, 0.35]));
    gl.enable(gl.CULL_FACE);
    gl.cullFace(gl.BACK);
    for (const b of bodies) {
      const s = b.size;
      let mesh, scale, half = 0;
      // a mesh body is drawn as the box around it in its own frame (its size: half extents)
      if (b.shape === 'box' || b.shape === 'mesh') { mesh = this.meshes.box; scale = [s[0], s[1], s[2]]; }
      else if (b.shape === 'capsule') { mesh = this.meshes.sphere; scale = [s[0], s[0], s[0]]; half = s[1] / Math.max(s[0], 1e-6); }
      else { mesh = this.meshes.sphere; scale = [s[0], s[0], s[0]]; }
      gl.uniformMatrix4fv(u.uModel, false, modelMatrix(b.pos, b.rot, scale));
      gl.uniform1f(u.uHalfLen, half);
      let c = b.static ? [0.45, 0.47, 0.5] : [0.78, 0.55, 0.33];
      if (b.grabbed_by) { const h = holderColour?.(b.grabbed_by) || [1, 1, 1]; c = vec3.lerp(c, h, 0.55); }
      gl.uniform3fv(u.uColor, c);
      gl.uniform1f(u.uHeld, b.grabbed_by ? 1 : 0);
      gl.bindVertexArray(mesh.vao);
      gl.drawElements(gl.TRIANGLES, mesh.count, gl.UNSIGNED_SHORT, 0);
    }
    gl.bindVertexArray(null);
    gl.disable(gl.CULL_FACE);
  }

  // The obstacles to draw: [{hash, flat}] (obstacle_mesh.js's drawable():
  // flat-shaded triangles, position and normal interleaved, world
  // coordinates).  A mesh already on the GPU (by hash) is kept; one no longer
  // listed is freed.
  setObstacles(list) {
    const gl = this.gl;
    const keep = new Map();
    for (const o of list) {
      let g = this.obstacleGpu.get(o.hash) || keep.get(o.hash);
      if (!g) g = this._vao(o.flat, 24);
      keep.set(o.hash, g);
    }
    for (const [h, g] of this.obstacleGpu) if (!keep.has(h)) { gl.deleteBuffer(g.buf); gl.deleteVertexArray(g.vao); }
    this.obstacleGpu = keep;
    this.obstacleList = list.map((o) => this.obstacleGpu.get(o.hash));
  }

  // The obstacles, lit as the bodies are (one directional light and a sky
  // term), from both sides, in stone grey; counted in obstaclesDrawn.
  _drawObstacles(cam) {
    let drawn = 0;
    if (this.obstacleList.length) {
      const gl = this.gl, pr = this.p.body, u = pr.u;
      gl.useProgram(pr.prog);
      gl.uniformMatrix4fv(u.uViewProj, false, cam.viewProj);
      gl.uniform3fv(u.uEye, cam.position);
      gl.uniform3fv(u.uLightW, vec3.norm([-0.4, 0.85, 0.35]));
      gl.uniformMatrix4fv(u.uModel, false, IDENTITY);
      gl.uniform1f(u.uHalfLen, 0);
      gl.uniform1f(u.uHeld, 0);
      gl.uniform1f(u.uTwoSided, 1);
      gl.uniform3fv(u.uColor, [0.62, 0.6, 0.56]);
      for (const g of this.obstacleList) {
        gl.bindVertexArray(g.vao);
        gl.drawArrays(gl.TRIANGLES, 0, g.count);
        drawn++;
      }
      gl.uniform1f(u.uTwoSided, 0);
      gl.bindVertexArray(null);
    }
    this.obstaclesDrawn = drawn;
  }

  // World description from a hello: materials' colours, particle size.
  setWorld(hello) {
    this.bounds = hello.bounds.slice();
    this.spacing = hello.h / 2.1;             // the scenes use h = 2.1 spacings
    this.radius = 0.5 * this.spacing;
    this.baseRadius = this.radius;
    (hello.materials || []).forEach((m) => {
      if (m.index >= 0 && m.index < 8) this.matColours.set(materialColour(m.name, m.index), 3 * m.index);
    });
    // Room for the current count and some growth; buffers grow on demand.
    this._ensureCapacity(Math.max(1024, Math.ceil(1.25 * (hello.particles || 0))));
    this.slotKey = ['', ''];
    this.matOrder = -1;
    this.drawN = 0;
  }

  _ensureCapacity(need) {
    if (need <= this.cap) return;
    const gl = this.gl;
    const n = Math.max(need, Math.ceil(this.cap * 1.5));
    this.cap = n;
    for (const b of this.posBuf) { gl.bindBuffer(gl.ARRAY_BUFFER, b); gl.bufferData(gl.ARRAY_BUFFER, 6 * n, gl.DYNAMIC_DRAW); }
    gl.bindTexture(gl.TEXTURE_2D, this.matTex);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.R8UI, MAT_W, Math.ceil(n / MAT_W), 0, gl.RED_INTEGER, gl.UNSIGNED_BYTE, null);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
    for (const t of this.tempTex) {
      gl.bindTexture(gl.TEXTURE_2D, t);
      gl.texImage2D(gl.TEXTURE_2D, 0, gl.R8UI, MAT_W, Math.ceil(n / MAT_W), 0, gl.RED_INTEGER, gl.UNSIGNED_BYTE, null);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.NEAREST);
      gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.NEAREST);
    }
    gl.bindTexture(gl.TEXTURE_2D, null);
    this.scratch = new Uint16Array(3 * n);
    this.scratch8 = new Uint8Array(n);
    this.hasTemp = [false, false];
    this.slotKey = ['', ''];
    this.matOrder = -1;
  }

  // The colour ramp for frames whose temperatures start at lo °C.
  _setLut(lo) {
    if (this.lutLo === lo) return;
    const gl = this.gl;
    tempLut(lo, this.lutBytes);
    gl.bindTexture(gl.TEXTURE_2D, this.lutTex);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
    gl.texImage2D(gl.TEXTURE_2D, 0, gl.RGBA8, 256, 1, 0, gl.RGBA, gl.UNSIGNED_BYTE, this.lutBytes);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MIN_FILTER, gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_MAG_FILTER, gl.LINEAR);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_S, gl.CLAMP_TO_EDGE);
    gl.texParameteri(gl.TEXTURE_2D, gl.TEXTURE_WRAP_T, gl.CLAMP_TO_EDGE);
    gl.bindTexture(gl.TEXTURE_2D, null);
    this.lutLo = lo;
  }

  // n bytes (one per particle) into an R8UI texture MAT_W texels wide, as
  // whole rows and a partial last row, straight from the frame's bytes.
  _uploadBytes(tex, bytes, n) {
    const gl = this.gl, rows = Math.floor(n / MAT_W), rest = n - rows * MAT_W;
    gl.bindTexture(gl.TEXTURE_2D, tex);
    gl.pixelStorei(gl.UNPACK_ALIGNMENT, 1);
    if (rows) gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, 0, MAT_W, rows, gl.RED_INTEGER, gl.UNSIGNED_BYTE, bytes, 0);
    if (rest) gl.texSubImage2D(gl.TEXTURE_2D, 0, 0, rows, rest, 1, gl.RED_INTEGER, gl.UNSIGNED_BYTE, bytes, rows * MAT_W);
    gl.bindTexture(gl.TEXTURE_2D, null);
    return n;
  }

  // Makes the GPU hold timeline entries a (previous) and b (current), both in
  // b's id order.  Uploads only what is missing: normally one position
  // array per new frame, as received (no conversion).  Returns the bytes sent.
  uploadPair(a, b) {
    const gl = this.gl;
    const n = b.f.n;
    this._ensureCapacity(n);
    const keyC = `${b.seq}@${b.order}`, keyP = `${a.seq}@${b.order}`;
    let bytes = 0;
    let cs = this.slotKey.indexOf(keyC);
    let ps = this.slotKey.indexOf(keyP);
    if (cs < 0) {
      cs = ps === 0 ? 1 : 0;
      gl.bindBuffer(gl.ARRAY_BUFFER, this.posBuf[cs]);
      gl.bufferSubData(gl.ARRAY_BUFFER, 0, b.f.pos);
      this.slotKey[cs] = keyC;
      bytes += b.f.pos.byteLength;
      this.hasTemp[cs] = !!b.f.temp;
      if (b.f.temp) bytes += this._uploadBytes(this.tempTex[cs], b.f.temp, n);
    }
    if (keyP === keyC) ps = cs;
    else if (ps < 0) {
      ps = 1 - cs;
      let src;
      if (a.order === b.order) src = a.f.pos;
      else {
        const out = this.scratch.subarray(0, 3 * n);
        remapByIds(a.f.runs, a.f.pos, b.f.runs, b.f.pos, out);
        src = out;
      }
      gl.bindBuffer(gl.ARRAY_BUFFER, this.posBuf[ps]);
      gl.bufferSubData(gl.ARRAY_BUFFER, 0, src);
      this.slotKey[ps] = keyP;
      bytes += src.byteLength;
      // The previous temperatures, in b's order (a frame without them: b's own).
      let t = b.f.temp;
      if (a.f.temp && b.f.temp) {
        if (a.order === b.order) t = a.f.temp;
        else { t = this.scratch8.subarray(0, n); remapByIds(a.f.runs, a.f.temp, b.f.runs, b.f.temp, t, 1); }
      }
      this.hasTemp[ps] = !!t;
      if (t) bytes += this._uploadBytes(this.tempTex[ps], t, n);
    }
    if (b.f.temp) this._setLut(b.f.tempLo);
    if (this.matOrder !== b.order) {
      bytes += this._uploadBytes(this.matTex, b.f.mat, n);
      this.matOrder = b.order;
    }
    if (ps !== this.prevSlot || cs !== this.curSlot || this.drawN !== n || !this.vaoReady) {
      gl.bindVertexArray(this.vao);
      gl.bindBuffer(gl.ARRAY_BUFFER, this.posBuf[ps]);
      gl.enableVertexAttribArray(0);
      gl.vertexAttribPointer(0, 3, gl.UNSIGNED_SHORT, true, 6, 0);
      gl.vertexAttribDivisor(0, 0);
      gl.bindBuffer(gl.ARRAY_BUFFER, this.posBuf[cs]);
      gl.enableVertexAttribArray(1);
      gl.vertexAttribPointer(1, 3, gl.UNSIGNED_SHORT, true, 6, 0);
      gl.vertexAttribDivisor(1, 0);
      gl.bindVertexArray(null);
      this.vaoReady = true;
    }
    this.prevSlot = ps; this.curSlot = cs;
    this.drawN = n;
    this.bounds = b.f.bounds;
    return bytes;
  }

  // --- the benchmark's API (bench_hook.js) ---------------------------------
  // Returns once the GPU process has done all that was queued (a 1-pixel
  // readPixels of the screen).
  finish() {
    const gl = this.gl;
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, this.finishPixel);
  }

  // n temperature bytes uploaded as a frame's are (into the first slot's
  // texture); returns the bytes sent.
  uploadTemperatures(bytes, n) { return this._uploadBytes(this.tempTex[0], bytes, n); }

  // A frame of a tier of detail (PROTOCOL.md "Tiers of detail": 1 in keep
  // particles) is drawn with sprites keep^(1/3) times as large, so that the
  // same volume of fluid looks as full; the full world (lod null) as it is.
  setDetail(lod) {
    const keep = lod && lod.keep > 1 ? lod.keep : 1;
    if (this.baseRadius) this.radius = this.baseRadius * Math.cbrt(keep);
  }

  // Forgets what the GPU holds, so that the next uploadPair sends it all.
  forgetUploads() { this.slotKey = ['', '']; this.matOrder = -1; }

  resize(w, h) {
    if (this.canvas.width !== w || this.canvas.height !== h) {
      this.canvas.width = w; this.canvas.height = h;
    }
  }

  _lightView(cam) {
    const L = vec3.norm([-0.4, 0.85, 0.35]);
    const v = cam.view;
    return vec3.norm([v[0] * L[0] + v[4] * L[1] + v[8] * L[2], v[1] * L[0] + v[5] * L[1] + v[9] * L[2], v[2] * L[0] + v[6] * L[1] + v[10] * L[2]]);
  }

  _particleUniforms(pr, cam, opts, radius) {
    const gl = this.gl, u = pr.u, b = this.bounds;
    gl.uniformMatrix4fv(u.uView, false, cam.view);
    gl.uniformMatrix4fv(u.uProj, false, cam.proj);
    gl.uniform3f(u.uMin, b[0], b[1], b[2]);
    gl.uniform3f(u.uSize, b[3] - b[0], b[4] - b[1], b[5] - b[2]);
    gl.uniform1f(u.uAlpha, opts.alpha);
    gl.uniform1f(u.uRadius, radius);
    gl.uniform1f(u.uPixelScale, cam.proj[5] * this.viewH / 2);
    gl.uniform1f(u.uInvDt, opts.invDt || 0);
    gl.uniform1f(u.uSpeedMax, opts.speedMax || 3);
    const temp = opts.colorMode === 'temperature' && this.hasTemp[this.curSlot] && this.hasTemp[this.prevSlot];
    gl.uniform1i(u.uColorMode, opts.colorMode === 'speed' ? 1 : temp ? 2 : 0);
    gl.uniform3fv(u.uMatColor, this.matColours);
    gl.activeTexture(gl.TEXTURE0);
    gl.bindTexture(gl.TEXTURE_2D, this.matTex);
    gl.uniform1i(u.uMatTex, 0);
    gl.activeTexture(gl.TEXTURE1);
    gl.bindTexture(gl.TEXTURE_2D, this.tempTex[this.prevSlot]);
    gl.uniform1i(u.uTempPrev, 1);
    gl.activeTexture(gl.TEXTURE2);
    gl.bindTexture(gl.TEXTURE_2D, this.tempTex[this.curSlot]);
    gl.uniform1i(u.uTempCur, 2);
    gl.activeTexture(gl.TEXTURE3);
    gl.bindTexture(gl.TEXTURE_2D, this.lutTex);
    gl.uniform1i(u.uTempLut, 3);
    gl.activeTexture(gl.TEXTURE0);
    if (u.uLight) gl.uniform3fv(u.uLight, this._lightView(cam));
    if (u.uUp) gl.uniform3f(u.uUp, cam.view[4], cam.view[5], cam.view[6]);
  }

  _drawParticles(pr) {
    const gl = this.gl;
    if (!this.drawN) return;
    gl.bindVertexArray(this.vao);
    gl.drawArrays(gl.POINTS, 0, this.drawN);
    gl.bindVertexArray(null);
  }

  _drawBox(cam) {
    const gl = this.gl, b = this.bounds;
    gl.enable(gl.CULL_FACE);
    gl.cullFace(gl.FRONT);            // the far walls, seen from inside
    let pr = this.p.box;
    gl.useProgram(pr.prog);
    gl.uniformMatrix4fv(pr.u.uViewProj, false, cam.viewProj);
    gl.uniform3f(pr.u.uMin, b[0], b[1], b[2]);
    gl.uniform3f(pr.u.uSize, b[3] - b[0], b[4] - b[1], b[5] - b[2]);
    gl.uniform1f(pr.u.uGrid, this.spacing * 2.5);
    gl.bindVertexArray(this.boxVao.vao);
    gl.drawArrays(gl.TRIANGLES, 0, this.boxVao.count);
    gl.disable(gl.CULL_FACE);
    pr = this.p.line;
    gl.useProgram(pr.prog);
    gl.uniformMatrix4fv(pr.u.uViewProj, false, cam.viewProj);
    gl.uniform3f(pr.u.uMin, b[0], b[1], b[2]);
    gl.uniform3f(pr.u.uSize, b[3] - b[0], b[4] - b[1], b[5] - b[2]);
    gl.uniform4f(pr.u.uColor, 0.55, 0.62, 0.72, 1);
    gl.bindVertexArray(this.lineVao.vao);
    gl.drawArrays(gl.LINES, 0, this.lineVao.count);
    gl.bindVertexArray(null);
  }

  // markers: [{pos, colour [r,g,b], radius, ring?, alpha?}]
  _drawMarkers(cam, markers) {
    if (!markers?.length) return;
    const gl = this.gl, pr = this.p.marker;
    gl.useProgram(pr.prog);
    gl.uniformMatrix4fv(pr.u.uView, false, cam.view);
    gl.uniformMatrix4fv(pr.u.uProj, false, cam.proj);
    gl.uniform3fv(pr.u.uLight, this._lightView(cam));
    gl.bindVertexArray(this.emptyVao);
    for (const m of markers) {
      if (m.ring) { gl.enable(gl.BLEND); gl.blendFunc(gl.SRC_ALPHA, gl.ONE_MINUS_SRC_ALPHA); gl.depthMask(false); }
      gl.uniform3fv(pr.u.uCenterW, m.pos);
      gl.uniform1f(pr.u.uRadius, m.radius);
      gl.uniform4f(pr.u.uColor, m.colour[0], m.colour[1], m.colour[2], m.alpha ?? 1);
      gl.uniform1i(pr.u.uRing, m.ring ? 1 : 0);
      gl.drawArrays(gl.TRIANGLE_STRIP, 0, 4);
      if (m.ring) { gl.disable(gl.BLEND); gl.depthMask(true); }
    }
    gl.bindVertexArray(null);
  }

  // The box and the bodies on a cleared framebuffer fb (null: the screen), w x h.
  _drawBackground(cam, opts, fb, w, h) {
    const gl = this.gl;
    gl.bindFramebuffer(gl.FRAMEBUFFER, fb);
    gl.viewport(0, 0, w, h);
    gl.clearColor(0.07, 0.08, 0.10, 1);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    gl.enable(gl.DEPTH_TEST);
    gl.depthFunc(gl.LEQUAL);
    this._drawBox(cam);
    this._drawBodies(cam, opts.bodies, opts.holderColour);
    this._drawObstacles(cam);
  }

  // opts: {alpha, invDt, colorMode, speedMax, mode: 'particles'|'surface', markers}
  draw(cam, opts) {
    const gl = this.gl;
    const w = this.canvas.width, h = this.canvas.height;
    if (opts.mode === 'surface' && this.floatTargets && this.drawN) { this._drawSurface(cam, opts); return; }
    this._drawBackground(cam, opts, null, w, h);
    const pr = this.p.particle;
    gl.useProgram(pr.prog);
    this.viewH = h;
    this._particleUniforms(pr, cam, opts, this.radius);
    this._drawParticles(pr);
    this._drawMarkers(cam, opts.markers);
  }

  _ssfTargets(w, h) {
    if (this.ssf && this.ssf.w === w && this.ssf.h === h) return this.ssf;
    const gl = this.gl;
    if (this.ssf) this._freeSsf();
    // The fluid's own buffers stay under ~2 megapixels (a 4K screen at
    // device pixel ratio 2 would otherwise cost 8 MP per blur pass).
    const k = Math.min(1, Math.sqrt(2.0e6 / (w * h)));
    const sw = Math.max(1, Math.round(w * k)), sh = Math.max(1, Math.round(h * k));
    const hw = Math.max(1, sw >> 1), hh = Math.max(1, sh >> 1);
    const s = { w, h, sw, sh, hw, hh, tex: [] };
    const T = (ww, hh2, i, f, t, filt) => { const x = texture(gl, ww, hh2, i, f, t, filt); s.tex.push(x); return x; };
    s.sceneColour = T(w, h, gl.RGBA8, gl.RGBA, gl.UNSIGNED_BYTE, gl.LINEAR);
    s.sceneDepth = T(w, h, gl.DEPTH_COMPONENT24, gl.DEPTH_COMPONENT, gl.UNSIGNED_INT, gl.NEAREST);
    s.depth = [T(sw, sh, gl.R32F, gl.RED, gl.FLOAT), T(sw, sh, gl.R32F, gl.RED, gl.FLOAT)];
    s.thick = [T(hw, hh, gl.RGBA16F, gl.RGBA, gl.HALF_FLOAT, gl.LINEAR), T(hw, hh, gl.RGBA16F, gl.RGBA, gl.HALF_FLOAT, gl.LINEAR)];
    s.sceneFb = framebuffer(gl, [s.sceneColour], s.sceneDepth, w, h);
    s.depthFb = framebuffer(gl, [s.depth[0]], true, sw, sh);
    s.depthFb2 = framebuffer(gl, [s.depth[1]], null, sw, sh);
    s.depthFb3 = framebuffer(gl, [s.depth[0]], null, sw, sh);
    s.thickFb = [framebuffer(gl, [s.thick[0]], null, hw, hh), framebuffer(gl, [s.thick[1]], null, hw, hh)];
    this.ssf = s;
    return s;
  }

  _freeSsf() {
    const gl = this.gl, s = this.ssf;
    for (const t of s.tex) gl.deleteTexture(t);
    for (const f of [s.sceneFb, s.depthFb, s.depthFb2, s.depthFb3, ...s.thickFb]) {
      gl.deleteFramebuffer(f.fb);
      if (f.rb) gl.deleteRenderbuffer(f.rb);
    }
    this.ssf = null;
  }

  _fullscreen(pr, fb, w, h, setup) {
    const gl = this.gl;
    gl.bindFramebuffer(gl.FRAMEBUFFER, fb ? fb.fb : null);
    gl.viewport(0, 0, w, h);
    gl.useProgram(pr.prog);
    setup(pr.u);
    gl.bindVertexArray(this.emptyVao);
    gl.drawArrays(gl.TRIANGLES, 0, 3);
  }

  _bindTex(unit, tex, loc) {
    const gl = this.gl;
    gl.activeTexture(gl.TEXTURE0 + unit);
    gl.bindTexture(gl.TEXTURE_2D, tex);
    gl.uniform1i(loc, unit);
  }

  // Screen-space fluid rendering (van der Laan et al. 2009, simplified):
  // sphere depth -> bilateral smoothing -> normals; additive thickness ->
  // absorption; Fresnel mix with a sky reflection.
  _drawSurface(cam, opts) {
    const gl = this.gl;
    const w = this.canvas.width, h = this.canvas.height;
    const s = this._ssfTargets(w, h);
    const r = this.radius * 1.35;
    // 1. the background into a texture.
    this._drawBackground(cam, opts, s.sceneFb.fb, w, h);
    // 2. nearest sphere depth.
    gl.bindFramebuffer(gl.FRAMEBUFFER, s.depthFb.fb);
    gl.viewport(0, 0, s.sw, s.sh);
    gl.clearColor(0, 0, 0, 0);
    gl.clear(gl.COLOR_BUFFER_BIT | gl.DEPTH_BUFFER_BIT);
    let pr = this.p.ssfDepth;
    gl.useProgram(pr.prog);
    this.viewH = s.sh;
    this._particleUniforms(pr, cam, opts, r);
    this._drawParticles(pr);
    // 3. thickness and colour, half resolution, additive.
    gl.bindFramebuffer(gl.FRAMEBUFFER, s.thickFb[0].fb);
    gl.viewport(0, 0, s.hw, s.hh);
    gl.clear(gl.COLOR_BUFFER_BIT);
    gl.disable(gl.DEPTH_TEST);
    gl.enable(gl.BLEND);
    gl.blendFunc(gl.ONE, gl.ONE);
    pr = this.p.ssfThick;
    gl.useProgram(pr.prog);
    this.viewH = s.hh;
    this._particleUniforms(pr, cam, opts, r * 1.2);
    this._drawParticles(pr);
    gl.disable(gl.BLEND);
    // 4. smooth the depth (bilateral over a spiral disc, four times) and the thickness.
    const projScale = cam.proj[5] * s.sh / 2;
    const blur = (src, dst, rot) => this._fullscreen(this.p.blur, dst, s.sw, s.sh, (u) => {
      this._bindTex(0, src, u.uTex);
      gl.uniform2f(u.uTexel, 1 / s.sw, 1 / s.sh);
      gl.uniform1f(u.uRot, rot);
      gl.uniform1f(u.uWorldRadius, this.radius * 4.5);
      gl.uniform1f(u.uProjScale, projScale);
      gl.uniform1f(u.uDepthFalloff, this.radius * 6.0);
    });
    blur(s.depth[0], s.depthFb2, 0.0);
    blur(s.depth[1], s.depthFb3, 1.3);
    blur(s.depth[0], s.depthFb2, 2.1);
    blur(s.depth[1], s.depthFb3, 0.7);
    const gauss = (src, dst, dx, dy) => this._fullscreen(this.p.gauss, dst, s.hw, s.hh, (u) => {
      this._bindTex(0, src, u.uTex);
      gl.uniform2f(u.uDir, dx / s.hw, dy / s.hh);
    });
    gauss(s.thick[0], s.thickFb[1], 1, 0);
    gauss(s.thick[1], s.thickFb[0], 0, 1);
    // 5. shade onto the screen, writing depth so cursors sort against it.
    gl.enable(gl.DEPTH_TEST);
    gl.depthFunc(gl.ALWAYS);
    gl.bindFramebuffer(gl.FRAMEBUFFER, null);
    gl.clear(gl.DEPTH_BUFFER_BIT);
    const tanHalf = Math.tan(cam.fovy / 2);
    const v = cam.view;
    this._fullscreen(this.p.shade, null, w, h, (u) => {
      this._bindTex(0, s.depth[0], u.uDepth);
      this._bindTex(1, s.thick[0], u.uThick);
      this._bindTex(2, s.sceneColour, u.uScene);
      this._bindTex(3, s.sceneDepth, u.uSceneDepth);
      gl.uniform2f(u.uTexel, 2 / s.sw, 2 / s.sh);
      gl.uniform2f(u.uTanHalf, tanHalf * cam.aspect, tanHalf);
      gl.uniform1f(u.uShift, cam.proj[8]);
      gl.uniformMatrix4fv(u.uProj, false, cam.proj);
      gl.uniformMatrix3fv(u.uInvViewRot, false, new Float32Array([v[0], v[4], v[8], v[1], v[5], v[9], v[2], v[6], v[10]]));
      gl.uniform3fv(u.uLight, this._lightView(cam));
    });
    gl.depthFunc(gl.LEQUAL);
    for (let i = 0; i < 4; i++) { gl.activeTexture(gl.TEXTURE0 + i); gl.bindTexture(gl.TEXTURE_2D, null); }
    gl.activeTexture(gl.TEXTURE0);
    this._drawMarkers(cam, opts.markers);
  }
}
