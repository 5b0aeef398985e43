import { describeSimulatorSeeds } from './simulator-seeds.ts';

describeSimulatorSeeds('pglite');
