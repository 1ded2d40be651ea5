#!/usr/bin/env python3
"""Few-shot gestures (issue 53): one model per person from K drawings of each of their gestures, made by
`classify train shape` with default options, tested on that person's other drawings; Protractor (Li 2010) with the
same templates beside it. Reads the validation-only $1 and MMG files from ../shared/realdata (never copied).

  python3 scripts/gesture_fewshot.py --classify .build/release/classify [--set dollar|mmg] [--k 1,3,5,10] [--trials 2]
"""
import argparse, collections, csv, json, math, os, random, subprocess, sys, tempfile, time

REAL = os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..', 'shared', 'realdata')

def load(name, label):
    drawings = collections.OrderedDict()
    with open(os.path.join(REAL, name)) as f:
        for row in csv.DictReader(f):
            d = drawings.setdefault(row['drawing'], {'name': row['drawing'], 'label': label(row), 'person': row.get('subject', ''), 'strokes': collections.OrderedDict()})
            d['strokes'].setdefault(int(row['stroke']), []).append((float(row['x']), float(row['y'])))
    return [dict(d, strokes=list(d['strokes'].values())) for d in drawings.values()]

def dataset(name):
    if name == 'dollar':
        return load('shapes-dollar1-dev.csv', lambda r: r['label']) + load('shapes-other-dollar1-dev.csv', lambda r: r['category'])
    return load('shapes-mmg-star-dev.csv', lambda r: 'star') + load('shapes-other-mmg-dev.csv', lambda r: r['category'])

def write(path, drawings):
    with open(path, 'w') as f:
        f.write('drawing,label,stroke,x,y\n')
        for d in drawings:
            for s, stroke in enumerate(d['strokes']):
                for x, y in stroke:
                    f.write(f"{d['name']},{d['label']},{s},{x:g},{y:g}\n")

# Protractor (Li 2010), orientation-sensitive, 16 points, strokes joined in drawing order.
def protractor_vector(strokes, n=16):
    points = [p for s in strokes for p in s]
    lengths = [math.dist(a, b) for a, b in zip(points, points[1:])]
    total = sum(lengths)
    step = total / (n - 1) if total > 0 else 0
    out, travelled, target = [points[0]], 0.0, step
    for (a, b), length in zip(zip(points, points[1:]), lengths):
        while length > 0 and len(out) < n and target <= travelled + length + 1e-9:
            t = (target - travelled) / length
            out.append((a[0] + t * (b[0] - a[0]), a[1] + t * (b[1] - a[1])))
            target += step
        travelled += length
    while len(out) < n:
        out.append(points[-1])
    cx, cy = sum(p[0] for p in out) / n, sum(p[1] for p in out) / n
    out = [(x - cx, y - cy) for x, y in out]
    indicative = math.atan2(out[0][1], out[0][0])
    base = math.pi / 4 * math.floor((indicative + math.pi / 8) / (math.pi / 4))
    c, s = math.cos(base - indicative), math.sin(base - indicative)
    v = [q for x, y in out for q in (x * c - y * s, x * s + y * c)]
    norm = math.sqrt(sum(q * q for q in v)) or 1
    return [q / norm for q in v]

def protractor_distance(a, b):
    dot = sum(a[i] * b[i] + a[i + 1] * b[i + 1] for i in range(0, len(a), 2))
    cross = sum(a[i] * b[i + 1] - a[i + 1] * b[i] for i in range(0, len(a), 2))
    angle = math.atan2(cross, dot)
    return math.acos(max(-1, min(1, dot * math.cos(angle) + cross * math.sin(angle))))

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--classify', required=True)
    parser.add_argument('--set', default='dollar,mmg')
    parser.add_argument('--k', default='1,3,5,10')
    parser.add_argument('--trials', type=int, default=2)
    args = parser.parse_args()
    if not os.path.isdir(REAL):
        print(f'skipped: {REAL} is absent (the validation files are not part of the project)')
        return
    for name in args.set.split(','):
        drawings = dataset(name)
        people = sorted({d['person'] for d in drawings}, key=lambda p: int(p))
        for k in [int(x) for x in args.k.split(',')]:
            ours, theirs, seconds = {}, {}, []
            for person in people:
                mine = [d for d in drawings if d['person'] == person]
                by = collections.defaultdict(list)
                for d in mine:
                    by[d['label']].append(d)
                right = [0, 0, 0]
                for trial in range(args.trials):
                    rng = random.Random(f'{name}-{person}-{k}-{trial}')
                    templates = [d for label in sorted(by) for d in rng.sample(by[label], k)]
                    chosen = {d['name'] for d in templates}
                    tests = [d for d in mine if d['name'] not in chosen]
                    with tempfile.TemporaryDirectory() as folder:
                        write(f'{folder}/train.csv', templates)
                        write(f'{folder}/test.csv', tests)
                        started = time.time()
                        subprocess.run([args.classify, 'train', 'shape', '--data', f'{folder}/train.csv', '--out', f'{folder}/m'],
                                       check=True, capture_output=True)
                        seconds.append(time.time() - started)
                        result = subprocess.run([args.classify, 'evaluate', 'shape', '--data', f'{folder}/test.csv', '--weights',
                                                 f'{folder}/m.f32.weights', '--json'], check=True, capture_output=True, text=True)
                    report = json.loads(result.stdout)
                    right[0] += round(report['accuracy'] * report['count'])
                    right[2] += len(tests)
                    vectors = [(protractor_vector(d['strokes']), d['label']) for d in templates]
                    for d in tests:
                        v = protractor_vector(d['strokes'])
                        right[1] += min(vectors, key=lambda t: protractor_distance(v, t[0]))[1] == d['label']
                ours[person], theirs[person] = right[0] / right[2], right[1] / right[2]
            def line(values):
                worst = min(values, key=values.get)
                return f'mean {100 * sum(values.values()) / len(values):.2f}%, worst {100 * values[worst]:.2f}% (person {worst})'
            print(f'{name} k={k}: ours {line(ours)}; Protractor {line(theirs)}; train {min(seconds):.2f}-{max(seconds):.2f} s', flush=True)

if __name__ == '__main__':
    main()
