import { readFileSync } from 'node:fs';
import semver from 'semver';
import { describe, expect, test } from 'vitest';

// The image runs a maintained Node LTS while development and CI run Node 20: these checks
// read what the image is built from and what the dependencies declare. Nothing here executes
// on the image's Node (there is no Docker engine where the tests run).

const dockerfile = readFileSync('Dockerfile', 'utf8');
const pkg = JSON.parse(readFileSync('package.json', 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
  packages: Record<string, { dev?: boolean; engines?: { node?: string } | string[] }>;
};

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

  test('is within package.json engines, as Node 20 is', () => {
    for (const major of [20, ...imageMajors]) {
      expect(semver.intersects(pkg.engines.node, anyOfMajor(major)), String(major)).toBe(true);
    }
  });

  test('is supported by every production dependency that declares a Node range', () => {
    const [major] = imageMajors as [number];
    const outside = Object.entries(lock.packages).flatMap(([path, info]) => {
      const range = !info.dev && !Array.isArray(info.engines) ? info.engines?.node : undefined;
      return range && !semver.intersects(range, anyOfMajor(major)) ? [`${path}: ${range}`] : [];
    });
    expect(outside).toEqual([]);
  });
});
