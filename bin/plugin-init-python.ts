import { mkdir, symlink, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { PACKAGE_ROOT } from '../core/build-info.js';
import { EXIT } from './cli-errors.js';
import { newPluginDir } from './plugin-init.js';

/**
 * `taskyard plugin init NAME --python`: a plugin whose Task is a Python script, declared in a
 * manifest (runner/command-tasks.ts): no TypeScript, no build step, nothing to install but the
 * plugin itself.
 */

const MANIFEST_YAML = (taskType: string) => `# The Tasks of this plugin (package.json names this file in "taskyard.tasks"). Each Task is a
# command run without a shell in its Task directory. taskyard checks the inputs against \`input\`
# before the command starts (they reach it as tt.inputs(), the JSON file $TASKYARD_INPUTS and
# TASKYARD_INPUT_<NAME> variables) and the output the script reports against \`output\` when it
# ends. Placeholders in command and env: {plugin_dir} {task_dir} {workspace} {inputs_file}.
tasks:
  - name: train
    task_type: ${taskType}
    description: Fits a line by gradient descent, reports the loss of each epoch as a metric and saves the model as an artifact.
    input:
      type: object
      properties:
        epochs: {type: integer, minimum: 1, default: 3, description: Passes over the data}
        lr: {type: number, exclusiveMinimum: 0, default: 0.5, description: Learning rate}
    output:
      type: object
      properties:
        final_loss: {type: number, description: Mean squared error after the last epoch}
      required: [final_loss]
    # resources: {gpus: 1, cpus: 4, memory_mb: 16000, time_limit_s: 3600}
    # A virtual environment's interpreter works too: [/path/to/venv/bin/python, ...]
    command: [python3, "{plugin_dir}/train.py"]
`;

const TRAIN_PY = `"""A training-like Task: fits y = 3x + 1 by gradient descent, reporting to taskyard as it goes.

Under taskyard (\`taskyard task run .\` here, or \`taskyard submit --task train\` once installed) its
inputs are the Task's typed inputs (taskyard.yaml) and its steps, progress, metrics, artifact and
output are recorded with the run. Run by hand (\`python3 train.py\`) it uses the defaults below and
prints what it would report.
"""
import json
import math

import taskyard_task as tt

DEFAULTS = {"epochs": 3, "lr": 0.5}


def train(epochs, lr):
    data = [(x / 10, 3 * x / 10 + 1) for x in range(10)]
    w = b = loss = 0.0
    for epoch in range(epochs):
        loss = grad_w = grad_b = 0.0
        for x, y in data:
            err = w * x + b - y
            loss += err * err / len(data)
            grad_w += 2 * err * x / len(data)
            grad_b += 2 * err / len(data)
        w, b = w - lr * grad_w, b - lr * grad_b
        tt.metric("loss", loss, step=epoch)
        tt.progress(100 * (epoch + 1) / epochs)
        print(f"epoch {epoch + 1}/{epochs}: loss {loss:.4f}")
    return {"w": w, "b": b}, loss


def main():
    params = {**DEFAULTS, **tt.inputs()}
    epochs, lr = int(params["epochs"]), float(params["lr"])
    with tt.step("train"):
        model, loss = train(epochs, lr)
    if not math.isfinite(loss):
        # An uncaught exception fails the Task with "ValueError: ..." (traceback in task.log).
        raise ValueError(f"training diverged (loss {loss}): lower lr")
    with tt.step("save"):
        # The working directory is the Task directory: artifacts are paths inside it.
        with open("model.json", "w", encoding="utf-8") as f:
            json.dump({**model, "epochs": epochs, "lr": lr}, f)
        tt.artifact("model", "model.json")
    tt.output(final_loss=loss)


if __name__ == "__main__":
    main()
`;

const README = (name: string) => `# ${name}

A taskyard plugin with one Python Task, \`train\` (\`taskyard.yaml\` declares it, \`train.py\` runs).

    python3 train.py                     # by hand: prints what it would report to taskyard
    taskyard task run . --epochs 5       # as a Task, here, without a service
    taskyard plugin install .            # into the running service (no build step)
    taskyard submit --task train --epochs 5 --lr 0.05 --follow

\`train.py\` reports through \`import taskyard_task as tt\` (the stdlib helper shipped with taskyard,
on the path of every Task; \`taskyard_task.py\` here is a link to it for runs by hand). Change the
inputs and output in \`taskyard.yaml\`, bump \`version\` in \`package.json\` and install again to upgrade.
`;

/** The package.json: the manifest names the Tasks; \`files\` keeps by-hand outputs out of the package. */
function packageJson(name: string): Record<string, unknown> {
  return {
    name,
    version: '0.1.0',
    description: 'A taskyard plugin: a Python Task',
    files: ['taskyard.yaml', 'train.py', 'README.md'],
    taskyard: { tasks: './taskyard.yaml' },
  };
}

/** `taskyard plugin init NAME --python`: writes an installable Python plugin into ./<name>. */
export async function initPythonPlugin(name: string): Promise<number> {
  const { dir, taskType } = await newPluginDir(name);
  await mkdir(dir);
  await writeFile(join(dir, 'package.json'), `${JSON.stringify(packageJson(name), null, 2)}\n`);
  await writeFile(join(dir, 'taskyard.yaml'), MANIFEST_YAML(taskType));
  await writeFile(join(dir, 'train.py'), TRAIN_PY);
  await writeFile(join(dir, 'README.md'), README(name));
  await writeFile(join(dir, '.gitignore'), 'taskyard_task.py\nmodel.json\n*.tgz\n__pycache__/\n');
  // Under taskyard the helper is on PYTHONPATH; a run by hand finds it through this link (the
  // script's directory comes first on sys.path), so both use the very file the service ships.
  await symlink(join(PACKAGE_ROOT, 'python', 'taskyard_task.py'), join(dir, 'taskyard_task.py'));
  console.log(`created ${dir}

next:
  cd ${basename(name)}
  python3 train.py                  # by hand: prints what it reports
  taskyard task run . --epochs 5    # runs the Task train here, without a service
  taskyard plugin install .         # installs it into the running service as it is
  taskyard submit --task train --epochs 5 --follow`);
  return EXIT.success;
}
