// swapformer-models: the task helpers are typed.
import { readFileSync } from 'node:fs';
import { loadModel } from 'swapformer';
import { encode, decode, score, accuracy, sampleInputs, TASKS, type Task } from 'swapformer-models/tasks.js';

export async function models(): Promise<void> {
  const model = await loadModel(readFileSync('reverse-rope.safetensors'));
  const ids: number[] = encode('hello', 'abcdefghijklmnop');
  const text: string = decode(model.predict(ids), ['^', '$']);
  const s: { right: number; total: number; allRight: boolean } = score('reverse', ids, model.predict(ids));
  const task: Task = TASKS[0];
  const { token, sequence } = accuracy(model, task, sampleInputs(8, 10, 16));
  // @ts-expect-error not a task
  score('rotate', ids, []);
  void text;
  void s;
  void token;
  void sequence;
}
