// Types of tasks.js (hand-written): the trained models' tasks, inputs and scores.

/** The tasks the models were trained on. */
export const TASKS: readonly ['reverse', 'sort', 'shift'];
export type Task = 'reverse' | 'sort' | 'shift';

/** Token ids of the markers '^' (0) and '$' (1), and of the first symbol (2). */
export const BOS: 0;
export const EOS: 1;
export const FIRST_SYMBOL: 2;

/** Token ids of a string of symbols ('abc' -> [0, 2, 3, 4, 1]); a character not in `symbols` throws. */
export function encode(text: string, symbols: string): number[];

/** The token string of ids, with the markers ('^', '$'); ids outside the vocabulary show as '?'. */
export function decode(ids: ArrayLike<number>, vocab: ArrayLike<string>): string;

/** The right output ids for input ids (markers included). An unknown task throws. */
export function target(task: Task, ids: readonly number[]): number[];

/** Correct content positions of a prediction. */
export function score(task: Task, ids: readonly number[], predicted: ArrayLike<number>): { right: number; total: number; allRight: boolean };

/** A deterministic stream of numbers in [0, 1) from a 32-bit seed (mulberry32). */
export function random(seed: number): () => number;

/** `count` deterministic random inputs of `T` tokens each ('^' + T - 2 symbols + '$'). */
export function sampleInputs(count: number, T: number, symbolCount: number, seed?: number): number[][];

/** Token and sequence accuracy of an encoder with an output head (a swapformer Encoder) on inputs, `batch` sequences per predict call (default 64). */
export function accuracy(
  encoder: { predict(ids: number[][]): Int32Array[] },
  task: Task,
  inputs: readonly number[][],
  batch?: number,
): { token: number; sequence: number };
