import { runArea } from './run-area';

runArea('staff');
