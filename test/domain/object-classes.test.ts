import { describe, expect, it } from 'vitest';
import { labelMapProblem } from '../../src/domain/object-classes.js';

const LABELS = { human: ['person'], vehicle: ['car', 'truck', 'bus', 'motorcycle', 'bicycle'] };

describe('labelMapProblem', () => {
  it.each([
    [LABELS, null],
    [{ human: ['persn'], vehicle: [] }, ['human[0]', /"persn" is not a class/]],
    [{ human: ['person'], vehicle: ['car', 'motorbike'] }, ['vehicle[1]', /"motorbike"/]],
    [{ human: ['person', 'car'], vehicle: ['car'] }, ['vehicle', /both human and vehicle/]],
  ] as const)('labelMapProblem(%j)', (labels, problem) => {
    const got = labelMapProblem(labels);
    if (problem === null) return expect(got).toBeNull();
    expect(got?.[0]).toBe(problem[0]);
    expect(got?.[1]).toMatch(problem[1]);
  });
});
