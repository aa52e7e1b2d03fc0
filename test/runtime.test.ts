import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, test } from 'vitest';

// package.json's engines states the Node releases the code and its production dependencies
// support; .ci/run runs the suite on the lowest of them (scripts/node) and a smoke pass on the
// image's Node. These checks read what the image is built from and what the production
// dependencies in the lockfile declare.

const dockerfile = readFileSync('Dockerfile', 'utf8');
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };

const imageMajors = [...dockerfile.matchAll(/^FROM node:(\d+)-/gm)].map((m) => Number(m[1]));
const anyOfMajor = (major: number) => `>=${major}.0.0 <${major + 1}.0.0`;

describe('the Node the image runs', () => {
  test('is one even-numbered (LTS) major of at least 22, in every stage', () => {
    expect(imageMajors.length).toBeGreaterThanOrEqual(2);
    expect(new Set(imageMajors).size).toBe(1);
    const [major] = imageMajors as [number];
    expect(major % 2).toBe(0);
    expect(major).toBeGreaterThanOrEqual(22);
  });

  test('is within package.json engines', () => {
    for (const major of imageMajors) {
      expect(semver.intersects(pkg.engines.node, anyOfMajor(major)), String(major)).toBe(true);
    }
  });
});

describe('package.json engines', () => {
  test('allows no Node that a production dependency refuses', () => {
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
      packages: Record<
        string,
        { name?: string; version?: string; dev?: boolean; engines?: unknown }
      >;
    };
    const production = Object.entries(lock.packages).filter(([path, info]) => path && !info.dev);
    expect(production.length).toBeGreaterThan(100);
    const refusing = production.flatMap(([path, { version, engines }]) => {
      const range = (engines as { node?: string } | undefined)?.node;
      return typeof range === 'string' && !semver.subset(pkg.engines.node, range)
        ? [`${path}@${version} wants ${range}`]
        : [];
    });
    expect(refusing).toEqual([]);
  });
});
