// roles.js - what this connection's role (hello.role) lets its user do, as
// PROTOCOL.md's table "Rooms and roles" gives it: each control the role may
// not use is disabled, with a tooltip naming the role it needs; the server
// refuses those commands anyway (this only spares the user a refusal).

export const ROLES = ['viewer', 'player', 'editor', 'owner', 'admin'];

// The role each control's command needs (by element id, or a tool radio's value).
export const NEEDS = {
  'tool:push': 'player', 'tool:heat': 'player', 'tool:cool': 'player',
  'add-sphere': 'player', 'add-box': 'player', 'add-capsule': 'player', 'clear-bodies': 'player',
  scene: 'editor', count: 'editor', load: 'editor', solver: 'editor', pause: 'editor', step: 'editor',
  emitter: 'editor', 'scene-emitter': 'editor', 'floor-plate': 'editor', record: 'editor', 'mat-params': 'editor',
  'add-mesh': 'player', 'mesh-file': 'player', 'clear-obstacles': 'player',
};

// Whether a connection with role have may do what needs role need (an
// unknown role may do what a viewer may).
export function allows(have, need) {
  return Math.max(0, ROLES.indexOf(have)) >= ROLES.indexOf(need);
}

// The tooltip of a control the role may not use.
export function lockReason(have, need) {
  return `needs the ${need} role; you are ${/^[aeiou]/.test(have) ? 'an' : 'a'} ${have} here`;
}

// Whether a control was locked by the role (other code that enables
// controls asks this first).
export function roleLocked(el) { return !!el?.dataset?.roleNeeds; }

// Locks and unlocks the page's controls for role (doc: the document).
// Returns the ids locked.
export function applyRole(doc, role) {
  const locked = [];
  for (const [key, need] of Object.entries(NEEDS)) {
    const el = key.startsWith('tool:') ? doc.querySelector(`input[name=tool][value=${key.slice(5)}]`) : doc.getElementById(key);
    if (!el) continue;
    const target = key.startsWith('tool:') ? el.closest('label') || el : el;
    if (allows(role, need)) {
      if (roleLocked(el)) {
        delete el.dataset.roleNeeds;
        el.disabled = false;
        target.classList.remove('role-locked');
        if (target.dataset.roleTitle !== undefined) { target.title = target.dataset.roleTitle; delete target.dataset.roleTitle; }
      }
      continue;
    }
    if (!roleLocked(el)) target.dataset.roleTitle = target.title || '';
    el.dataset.roleNeeds = need;
    el.disabled = true;
    target.classList.add('role-locked');
    target.title = lockReason(role, need);
    locked.push(key);
  }
  return locked;
}
