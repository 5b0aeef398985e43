import { describeSimulatorSeeds } from './simulator-seeds.ts';

describeSimulatorSeeds('postgres');
