#!/usr/bin/env python3
"""read_export.py FORMAT FILE - reads a particle export of GET /api/particles
with a reader independent of the server and prints it as JSON ({"ids",
"positions", "velocities", "materials", "temperatures"}) for
export.test.mjs: PLY and VTU with meshio (Debian's python3-meshio), VTP
(which meshio does not read) with the standard library's XML parser, CSV
with the csv module."""
import csv
import json
import sys
import xml.etree.ElementTree as ET


def from_meshio(path):
    import meshio
    m = meshio.read(path)
    d = m.point_data
    if 'velocity' in d:
        vel = d['velocity'].tolist()
    else:
        vel = [[float(a), float(b), float(c)] for a, b, c in zip(d['vx'], d['vy'], d['vz'])]
    return {'ids': [int(x) for x in d['id']], 'positions': m.points.tolist(), 'velocities': vel,
            'materials': [int(x) for x in d['material']], 'temperatures': [float(x) for x in d['temperature']]}


def from_vtp(path):
    root = ET.parse(path).getroot()
    piece = root.find('PolyData/Piece')
    arrays = {a.get('Name'): a for a in piece.iter('DataArray')}

    def nums(name, conv=float):
        return [conv(x) for x in arrays[name].text.split()]

    def triples(vals):
        return [vals[i:i + 3] for i in range(0, len(vals), 3)]
    n = int(piece.get('NumberOfPoints'))
    out = {'ids': nums('id', int), 'positions': triples(nums('Points')), 'velocities': triples(nums('velocity')),
           'materials': nums('material', int), 'temperatures': nums('temperature')}
    assert nums('connectivity', int) == list(range(n)) and nums('offsets', int) == list(range(1, n + 1))
    return out


def from_csv(path):
    rows = list(csv.DictReader(open(path, newline='')))
    return {'ids': [int(r['id']) for r in rows],
            'positions': [[float(r['x']), float(r['y']), float(r['z'])] for r in rows],
            'velocities': [[float(r['vx']), float(r['vy']), float(r['vz'])] for r in rows],
            'materials': [int(r['material']) for r in rows], 'material_names': [r['material_name'] for r in rows],
            'temperatures': [float(r['temperature']) for r in rows]}


fmt, path = sys.argv[1], sys.argv[2]
data = {'ply': from_meshio, 'vtu': from_meshio, 'vtp': from_vtp, 'csv': from_csv}[fmt](path)
print(json.dumps(data))
